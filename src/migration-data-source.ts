import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { parseEnv } from './config/env.js';
import { dataSourceOptions } from './database/data-source.js';
import { allEntities } from './entities.js';

/**
 * The data source the TypeORM command line works on (`npm run migration:run|revert|show|generate`):
 * every module's entities and the migrations, on DATABASE_URL as the service reads it. Only the database
 * settings are read, so no secrets are needed to run migrations.
 */
export default new DataSource({ ...dataSourceOptions(parseEnv(process.env).DATABASE_URL, 1), entities: allEntities });

import 'reflect-metadata';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { AppConfig } from '../config/app-config.js';
import { parseEnv } from '../config/env.js';
import { ProcessorCheck } from './processor-check.js';
import { QueueName } from './queues.js';

@Processor(QueueName.ValidateSdf)
class OnlyValidate extends WorkerHost {
  async process(): Promise<void> {}
}

function config(role: 'api' | 'worker' | 'all'): AppConfig {
  const secrets = {
    jwtSecret: 'a'.repeat(32),
    adminJwtSecret: 'b'.repeat(32),
    masterKeys: new Map(),
    currentKeyId: '1',
    masterKeySource: 'the MASTER_KEY environment variable',
  };
  return new AppConfig(parseEnv({ PROCESS_ROLE: role }), secrets);
}

async function boot(role: 'api' | 'worker' | 'all') {
  // Only the check and a decorated class: nothing connects to Redis, the metadata is the real one.
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    providers: [ProcessorCheck, OnlyValidate, { provide: AppConfig, useValue: config(role) }],
  }).compile();
  return moduleRef.createNestApplication().init();
}

describe('ProcessorCheck', () => {
  it('refuses to start a worker process when a queue has no processor, naming the queues', async () => {
    await expect(boot('worker')).rejects.toThrow(/No processor registered for queue\(s\): sign-sdf, webhook-delivery/);
    await expect(boot('all')).rejects.toThrow(/sign-sdf/);
  });

  it('does not apply to API-only processes', async () => {
    const app = await boot('api');
    await app.close();
  });
});

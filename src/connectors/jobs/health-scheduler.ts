import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Periodic } from '../../common/periodic.js';
import { AppConfig } from '../../config/app-config.js';
import { BackgroundOutages } from '../../queue/outages.js';
import { Connector } from '../entities/connector.entity.js';
import { ErpGateway } from '../erp-gateway.js';

const BATCH = 100;

/**
 * Worker processes check every active connector whose last check is older than the cache time, so
 * GET /connectors/health mostly answers from the row and an ERP outage shows without anyone asking.
 * Several workers checking the same connector is harmless (the last result stands).
 */
@Injectable()
export class ConnectorHealthScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ConnectorHealthScheduler');
  private readonly periodic = new Periodic(
    () => this.checkDue(),
    (err) => {
      if (!this.outages.failed('connector health checks', err))
        this.logger.warn({ msg: 'connector health round failed', err: String(err) });
    },
  );

  constructor(
    @Inject(AppConfig) private readonly config: AppConfig,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly gateway: ErpGateway,
    private readonly outages: BackgroundOutages,
  ) {}

  onApplicationBootstrap(): void {
    this.periodic.start(this.config.env.ERP_HEALTH_INTERVAL_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.periodic.stop();
  }

  async checkDue(): Promise<void> {
    const due = await this.ds.manager
      .createQueryBuilder(Connector, 'c')
      .where('c.is_active')
      .andWhere(`(c.last_health_check IS NULL OR c.last_health_check < now() - make_interval(secs => :age))`, {
        age: this.config.env.ERP_HEALTH_CACHE_SECONDS,
      })
      .orderBy('c.last_health_check', 'ASC', 'NULLS FIRST')
      .limit(BATCH)
      .getMany();
    for (const c of due) await this.gateway.checkHealth(c);
  }
}

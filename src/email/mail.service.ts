import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { AppConfig } from '../config/app-config.js';
import { emailJobOptions, QueueName } from '../queue/queues.js';
import type { EmailJobData } from './email-job.js';

/**
 * M1: mail is queued, never sent inside a request: a slow or absent SMTP server cannot fail or slow
 * the request that caused it. Call after the transaction commits (a rolled-back change sends nothing).
 */
@Injectable()
export class MailService {
  private readonly logger = new Logger(MailService.name);

  constructor(
    @InjectQueue(QueueName.Email) private readonly queue: Queue,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {}

  async enqueue(data: EmailJobData): Promise<void> {
    try {
      await this.queue.add(data.kind, data, emailJobOptions(this.config));
    } catch (err) {
      // The change is committed; the user can ask for the mail again (resend, a new invitation).
      this.logger.error({ msg: 'mail not queued', kind: data.kind, tenant_id: data.tenant_id, error: String(err) });
    }
  }

  /** An absolute link into the portal carrying a token; PUBLIC_BASE_URL in production, this server otherwise. */
  link(path: string, token: string): string {
    const url = new URL(this.page(path));
    url.searchParams.set('token', token);
    return url.toString();
  }

  /** An absolute link to a page of the portal. */
  page(path: string): string {
    const base = this.config.env.PUBLIC_BASE_URL ?? `http://localhost:${this.config.env.PORT}`;
    return new URL(path, base.endsWith('/') ? base : base + '/').toString();
  }
}

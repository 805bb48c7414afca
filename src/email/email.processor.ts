import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Job } from 'bullmq';
import nodemailer, { type Transporter } from 'nodemailer';
import { AppConfig } from '../config/app-config.js';
import { OutageGate } from '../queue/outages.js';
import { QueueName } from '../queue/queues.js';
import { RedisService } from '../redis/redis.module.js';
import type { EmailJobData } from './email-job.js';

/** Sends queued mail over SMTP (nodemailer). A failure throws and BullMQ retries with backoff. */
@Processor(QueueName.Email, { concurrency: 4 })
export class EmailProcessor extends WorkerHost implements OnApplicationShutdown {
  private readonly logger = new Logger(EmailProcessor.name);
  private transport: Transporter | null = null;
  private readonly outage: OutageGate;

  constructor(
    @Inject(AppConfig) private readonly config: AppConfig,
    private readonly redis: RedisService,
  ) {
    super();
    // The mail relay is the operator's infrastructure: while it cannot be reached, mail waits without
    // using its attempts, which are for a relay that answers and refuses.
    this.outage = new OutageGate(QueueName.Email, {
      maxDelayMs: config.env.JOB_OUTAGE_MAX_DELAY_MS,
      alsoUnavailable: isRelayUnreachable,
    });
  }

  process(job: Job<EmailJobData>, token?: string): Promise<void> {
    return this.outage.run(job, token, () => this.send(job));
  }

  /**
   * A job that runs again after its mail went out (its worker died before completing it, and another
   * took it over) finds the mark left after sending and sends nothing. Only a death in the instant
   * between the relay's acceptance and the mark sends twice; the second copy then has the same
   * Message-ID, by which mail systems recognise a duplicate.
   */
  private async send(job: Job<EmailJobData>): Promise<void> {
    const url = this.config.env.SMTP_URL;
    if (!url) throw new Error('SMTP_URL is not configured');
    const sent = this.redis.key('mail-sent', job.queueName, String(job.id));
    if ((await this.redis.client.exists(sent)) === 1) {
      this.logger.log({ msg: 'mail already sent; not sent again', tenant_id: job.data.tenant_id, job_id: job.id });
      return;
    }
    this.transport ??= nodemailer.createTransport(url);
    await this.transport.sendMail({
      from: this.config.env.MAIL_FROM,
      to: job.data.to,
      subject: job.data.message.subject,
      text: job.data.message.text,
      ...(job.data.message.html ? { html: job.data.message.html } : {}),
      messageId: `<${job.queueName}.${job.id}.${job.timestamp}@${mailDomain(this.config.env.MAIL_FROM)}>`,
    });
    await this.redis.client.set(sent, '1', 'EX', SENT_MARK_SECONDS);
    this.logger.log({ msg: 'mail sent', kind: job.data.kind, tenant_id: job.data.tenant_id, job_id: job.id });
  }

  onApplicationShutdown(): void {
    this.transport?.close();
  }
}

/** nodemailer's codes for a relay it could not connect to or lost (a refusal by the relay is `EENVELOPE`, `EMESSAGE`...). */
function isRelayUnreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ECONNECTION' || code === 'ESOCKET' || code === 'ETIMEDOUT' || code === 'EDNS';
}

/** How long a sent mail's mark is kept: longer than any job stays queued or is retried. */
const SENT_MARK_SECONDS = 7 * 24 * 3600;

/** The domain of the sender's address (`SDF <no-reply@example.com>` -> `example.com`), for Message-IDs. */
export function mailDomain(from: string): string {
  return /@([A-Za-z0-9.-]+)/.exec(from)?.[1] ?? 'localhost';
}

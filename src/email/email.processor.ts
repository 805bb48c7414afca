import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Job } from 'bullmq';
import nodemailer, { type Transporter } from 'nodemailer';
import { AppConfig } from '../config/app-config.js';
import { OutageGate } from '../queue/outages.js';
import { QueueName } from '../queue/queues.js';
import type { EmailJobData } from './email-job.js';

/** Sends queued mail over SMTP (nodemailer). A failure throws and BullMQ retries with backoff. */
@Processor(QueueName.Email, { concurrency: 4 })
export class EmailProcessor extends WorkerHost implements OnApplicationShutdown {
  private readonly logger = new Logger(EmailProcessor.name);
  private transport: Transporter | null = null;
  private readonly outage: OutageGate;

  constructor(@Inject(AppConfig) private readonly config: AppConfig) {
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

  private async send(job: Job<EmailJobData>): Promise<void> {
    const url = this.config.env.SMTP_URL;
    if (!url) throw new Error('SMTP_URL is not configured');
    this.transport ??= nodemailer.createTransport(url);
    await this.transport.sendMail({
      from: this.config.env.MAIL_FROM,
      to: job.data.to,
      subject: job.data.message.subject,
      text: job.data.message.text,
    });
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

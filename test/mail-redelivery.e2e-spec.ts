import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmailProcessor } from '../src/email/email.processor.js';
import { MailService } from '../src/email/mail.service.js';
import { QueueName } from '../src/queue/queues.js';
import { RedisService } from '../src/redis/redis.module.js';
import { startApp, type TestApp } from './helpers/app.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { waitUntil } from './helpers/wait.js';

describe('a mail job run again after its mail went out (its worker died before completing it)', () => {
  let smtp: SmtpSink;
  let t: TestApp;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({ env: { SMTP_URL: smtp.url } });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('sends nothing the second time; without the mark it would have sent it twice', async () => {
    await t.app.get(MailService).enqueue({
      tenant_id: '00000000-0000-4000-8000-000000000001',
      kind: 'invitation',
      to: 'invitee@example.com',
      message: { subject: 'You are invited', text: 'Join us.' },
    });
    await waitUntil(() => smtp.mails.length === 1, 'the mail', 15_000);
    const queue = t.app.get<Queue>(getQueueToken(QueueName.Email));
    // The job is marked completed only after the relay has taken the mail: wait for that too.
    await waitUntil(async () => (await queue.getCompleted()).length === 1, 'the mail job completed', 15_000);
    const [job] = await queue.getCompleted();
    expect(job).toBeDefined();

    // Redelivered as after a crash between sending and completing: the same job runs once more.
    const processor = t.app.get(EmailProcessor);
    await processor.process(job!);
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.mails).toHaveLength(1);

    // The mark is what prevents it.
    const redis = t.app.get(RedisService);
    await redis.client.del(redis.key('mail-sent', QueueName.Email, String(job!.id)));
    await processor.process(job!);
    await waitUntil(() => smtp.mails.length === 2, 'a second copy without the mark', 15_000);
  });
});

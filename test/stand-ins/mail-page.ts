import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReceivedMail } from '../helpers/smtp.js';

/**
 * The mails an SMTP stand-in received, for a person (a page at `/`) and for scripts, in the shape of
 * Mailpit's API, so the same commands read either: `GET /api/v1/messages` (newest first) and
 * `GET /api/v1/message/<ID>`, where the ID `latest` names the newest mail.
 */
export async function startMailPage(mails: ReceivedMail[], port = 0): Promise<{ url: string; close: () => void }> {
  const id = (i: number) => String(i + 1);
  const summary = (m: ReceivedMail, i: number) => ({
    ID: id(i),
    From: { Name: '', Address: m.from },
    To: [{ Name: '', Address: m.to }],
    Subject: m.subject,
    Created: m.received.toISOString(),
  });
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === '/api/v1/messages') {
      const newestFirst = mails.map(summary).reverse();
      return json(200, { total: mails.length, messages_count: mails.length, messages: newestFirst });
    }
    const one = /^\/api\/v1\/message\/([^/]+)$/.exec(path);
    if (one) {
      const index = one[1] === 'latest' ? mails.length - 1 : Number(one[1]) - 1;
      const mail = mails[index];
      if (!Number.isInteger(index) || !mail) return json(404, { error: 'message not found' });
      return json(200, { ...summary(mail, index), Text: mail.text });
    }
    if (path === '/') {
      const items = mails
        .map(
          (m) =>
            `<article><h2>${escapeHtml(m.subject)}</h2><p>To ${escapeHtml(m.to)}, ${m.received.toISOString()}</p>` +
            `<pre>${escapeHtml(m.text)}</pre></article>`,
        )
        .reverse()
        .join('');
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">' +
          `<title>Mail (stand-in)</title></head><body><main><h1>Mail received (${mails.length})</h1>` +
          (items || '<p>None yet; this page reloads every 5 seconds.</p>') +
          '</main></body></html>',
      );
      return;
    }
    json(404, { error: 'not found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

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
    if (path === '/favicon.ico') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (path === '/api/v1/messages') {
      const newestFirst = mails.map(summary).reverse();
      return json(200, { total: mails.length, messages_count: mails.length, messages: newestFirst });
    }
    const one = /^\/api\/v1\/message\/([^/]+)$/.exec(path);
    if (one) {
      const index = one[1] === 'latest' ? mails.length - 1 : Number(one[1]) - 1;
      const mail = mails[index];
      if (!Number.isInteger(index) || !mail) return json(404, { error: 'message not found' });
      return json(200, { ...summary(mail, index), Text: mail.text, HTML: mail.html ?? '' });
    }
    if (path === '/') {
      const items = mails.map(mailArticle).reverse().join('');
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
          '<meta name="viewport" content="width=device-width,initial-scale=1">' +
          // Only while nothing came: a reload under a reader's hand would lose their place in a mail.
          (mails.length ? '' : '<meta http-equiv="refresh" content="5">') +
          `<title>Mail (stand-in)</title><style>${STYLE}</style></head><body><main>` +
          `<h1>Mail received (${mails.length})</h1>` +
          (items
            ? '<p><a href="/">Check for new mail</a></p>' + items
            : '<p>None yet; this page reloads every 5 seconds.</p>') +
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

const STYLE =
  'body{font-family:system-ui,sans-serif;margin:0;padding:16px;background:#f6f7f9;color:#1f2328}' +
  'main{max-width:760px;margin:0 auto}article{background:#fff;border:1px solid #d0d7de;border-radius:8px;' +
  'padding:16px;margin:0 0 24px}h2{margin:0 0 4px;font-size:1.2rem}.meta{margin:0 0 12px;color:#57606a}' +
  'iframe{width:100%;height:560px;border:1px solid #d0d7de;border-radius:6px;background:#fff}' +
  'pre{white-space:pre-wrap;word-break:break-word}a{color:#0b57d0;word-break:break-all}';

/** The links a mail's text part holds (the HTML part carries the same ones). */
export function linksOf(text: string): string[] {
  return [...new Set(text.match(/https?:\/\/[^\s<>"]+/g) ?? [])];
}

/**
 * One mail: its HTML part in a sandboxed frame (no scripts, no same-origin access; a link the reader
 * clicks opens in this window, as a mail client would open it), its links, and its text part.
 */
function mailArticle(m: ReceivedMail, i: number): string {
  const id = `mail-${i + 1}`;
  const links = linksOf(m.text);
  // The frame is a document of its own: a link in it goes to the whole window, not into the frame.
  const html = m.html
    ? /<head[^>]*>/i.test(m.html)
      ? m.html.replace(/<head[^>]*>/i, (head) => `${head}<base target="_top">`)
      : `<base target="_top">${m.html}`
    : null;
  return (
    `<article aria-labelledby="${id}"><h2 id="${id}">${escapeHtml(m.subject)}</h2>` +
    `<p class="meta">To ${escapeHtml(m.to)}, ${m.received.toISOString()}</p>` +
    (html
      ? `<iframe title="${escapeHtml(`The mail: ${m.subject}`)}" sandbox="allow-top-navigation-by-user-activation" ` +
        `srcdoc="${escapeHtml(html)}"></iframe>`
      : `<pre>${escapeHtml(m.text)}</pre>`) +
    (links.length
      ? `<h3>Links in this mail</h3><ul>${links.map((l) => `<li><a href="${escapeHtml(l)}">${escapeHtml(l)}</a></li>`).join('')}</ul>`
      : '<p>No links in this mail.</p>') +
    (html ? `<details><summary>Text part</summary><pre>${escapeHtml(m.text)}</pre></details>` : '') +
    '</article>'
  );
}

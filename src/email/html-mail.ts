/** What an HTML mail says; every string is plain text, escaped here. */
export interface HtmlMailContent {
  title: string;
  /** The organisation the mail is about, shown above the title; null when there is none. */
  organization: string | null;
  paragraphs: string[];
  /** The mail's one action, as a button, with its address written out below for clients that hide buttons. */
  button?: { label: string; link: string };
  /** Further links, each after a line of text. */
  more?: { text: string; link: string }[];
  /** When the button's link stops working. */
  expiry?: string;
  /** Why the mail came, in the footer. */
  why: string;
}

/** Text for HTML content and attribute values alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

const FONT = "font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif";
const TEXT = `${FONT};font-size:16px;line-height:1.5;color:#1f2328`;
const SMALL = `${FONT};font-size:14px;line-height:1.5;color:#57606a`;
const LINK = 'color:#0b57d0;word-break:break-all';

/**
 * An HTML mail body: one column of tables (what mail clients lay out alike), inline CSS only, no
 * images or other remote content, every piece of text escaped.
 */
export function htmlMail(c: HtmlMailContent): string {
  const p = (text: string, style = TEXT) => `<p style="margin:0 0 16px;${style}">${escapeHtml(text)}</p>`;
  const a = (link: string) => `<a href="${escapeHtml(link)}" style="${LINK}">${escapeHtml(link)}</a>`;
  const parts: string[] = [];
  parts.push(
    `<p style="margin:0 0 8px;${SMALL}">SDF document service` +
      (c.organization ? ` &middot; <strong style="color:#1f2328">${escapeHtml(c.organization)}</strong>` : '') +
      '</p>',
  );
  parts.push(
    `<h1 style="margin:0 0 16px;${FONT};font-size:22px;line-height:1.3;color:#1f2328">${escapeHtml(c.title)}</h1>`,
  );
  for (const text of c.paragraphs) parts.push(p(text));
  if (c.button) {
    parts.push(
      '<table role="presentation" cellspacing="0" cellpadding="0" border="0" style="margin:8px 0 16px"><tr>' +
        '<td style="border-radius:6px;background:#0b57d0">' +
        `<a href="${escapeHtml(c.button.link)}" style="display:inline-block;padding:12px 24px;${FONT};font-size:16px;` +
        `font-weight:600;color:#ffffff;text-decoration:none;border-radius:6px">${escapeHtml(c.button.label)}</a>` +
        '</td></tr></table>',
    );
    if (c.expiry) parts.push(p(c.expiry, SMALL));
    parts.push(
      `<p style="margin:0 0 16px;${SMALL}">If the button does not work, copy this address into your browser:<br>${a(c.button.link)}</p>`,
    );
  } else if (c.expiry) {
    parts.push(p(c.expiry, SMALL));
  }
  for (const more of c.more ?? []) {
    parts.push(`<p style="margin:0 0 16px;${TEXT}">${escapeHtml(more.text)}<br>${a(more.link)}</p>`);
  }
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<title>${escapeHtml(c.title)}</title></head>` +
    '<body style="margin:0;padding:0;background:#f3f4f6">' +
    '<table role="presentation" width="100%" cellspacing="0" cellpadding="0" border="0" style="background:#f3f4f6"><tr>' +
    '<td align="center" style="padding:24px 12px">' +
    '<table role="presentation" width="100%" cellspacing="0" cellpadding="0" border="0" ' +
    'style="max-width:560px;background:#ffffff;border:1px solid #d0d7de;border-radius:8px"><tr>' +
    `<td style="padding:24px">${parts.join('')}</td></tr></table>` +
    `<p style="max-width:560px;margin:16px auto 0;${SMALL};font-size:13px">${escapeHtml(c.why)}</p>` +
    '</td></tr></table></body></html>'
  );
}

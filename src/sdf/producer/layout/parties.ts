import type { Block, Row } from './blocks.js';
import { formatScalar, humanize, isRecord } from './format.js';
import { inline, rowsOf } from './generic.js';

const TAX_IDS: Record<string, string> = { vat_id: 'VAT ID', tax_id: 'Tax ID', vat_number: 'VAT ID' };

/** An address as it is written on an envelope: street, postal code and city, country. */
export function addressLines(address: unknown): string[] {
  if (!isRecord(address)) return address === undefined || address === null ? [] : [formatScalar(address)];
  const { street, street2, postal_code, city, region, country, ...rest } = address;
  const lines: string[] = [];
  for (const part of [street, street2]) if (part !== undefined && part !== null) lines.push(formatScalar(part));
  const place = [postal_code, city]
    .filter((p) => p !== undefined && p !== null)
    .map(formatScalar)
    .join(' ');
  if (place !== '') lines.push(place);
  const area = [region, country]
    .filter((p) => p !== undefined && p !== null)
    .map(formatScalar)
    .join(', ');
  if (area !== '') lines.push(area);
  for (const [key, value] of Object.entries(rest)) lines.push(`${humanize(key)}: ${inline(value)}`);
  return lines;
}

/** The identifiers of a party as labelled text: "VAT ID DE123456789", "ID CH-123.456.789". */
function idLines(party: Record<string, unknown>): { key: string; label: string; value: string }[] {
  const out = [];
  for (const [key, value] of Object.entries(party)) {
    const label = TAX_IDS[key] ?? (key === 'id' || key.endsWith('_id') || key === 'eic' ? humanize(key) : undefined);
    if (label !== undefined && value !== null && !isRecord(value)) out.push({ key, label, value: formatScalar(value) });
  }
  return out;
}

function contactLine(contact: unknown): string | undefined {
  if (!isRecord(contact)) return contact === undefined || contact === null ? undefined : formatScalar(contact);
  return Object.values(contact)
    .filter((v) => v !== undefined && v !== null)
    .map(inline)
    .join(' · ');
}

/** A party (seller, buyer, shipper...): its name, address, identifiers, contact, then any other field. */
export function partyRows(party: unknown): Row[] {
  if (!isRecord(party)) return party === undefined || party === null ? [] : [{ text: formatScalar(party), bold: true }];
  const rows: Row[] = [];
  if (party.name !== undefined) rows.push({ text: formatScalar(party.name), bold: true });
  for (const line of addressLines(party.address)) rows.push({ text: line });
  const ids = idLines(party);
  for (const id of ids) rows.push({ text: `${id.label} ${id.value}` });
  const contact = contactLine(party.contact);
  if (contact) rows.push({ text: contact, muted: true });
  const shown = new Set(['name', 'address', 'contact', ...ids.map((i) => i.key)]);
  for (const [key, value] of Object.entries(party)) {
    if (shown.has(key)) continue;
    rows.push(...rowsOf({ [key]: value }));
  }
  return rows;
}

/** The issuer's letterhead: its name, then its address, identifiers and contact on small lines. */
export function letterhead(party: unknown): Block | undefined {
  if (!isRecord(party) || party.name === undefined) return undefined;
  const lines: string[] = [];
  const address = addressLines(party.address);
  if (address.length > 0) lines.push(address.join(', '));
  const ids = idLines(party);
  if (ids.length > 0) lines.push(ids.map((i) => `${i.label} ${i.value}`).join(' · '));
  const contact = contactLine(party.contact);
  if (contact) lines.push(contact);
  const shown = new Set(['name', 'address', 'contact', ...ids.map((i) => i.key)]);
  for (const [key, value] of Object.entries(party)) {
    if (!shown.has(key)) lines.push(`${humanize(key)}: ${inline(value)}`);
  }
  return { kind: 'letterhead', name: formatScalar(party.name), lines };
}

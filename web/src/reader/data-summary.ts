import { summarize } from '../../../src/sdf/summary.js';
import { formatAmount, formatDay } from '../format.js';
import { KEY_SHOWN, cut, type Fact } from './data-prepare.js';

/**
 * The short summary above a file's parts, made by the format core's own summarize() (src/sdf/summary.ts),
 * which the service also uses for its documents list: the business number, names and amounts from
 * data.json, the issuer from meta.json for every type. So the reader and the service say the same.
 */
export function summaryOf(data: unknown, meta: unknown): Fact[] {
  const summary = summarize(data, meta);
  const facts: Fact[] = [];
  const shown = (text: string): string => (text.length > KEY_SHOWN ? `${cut(text, KEY_SHOWN)}…` : text);
  facts.push({ label: 'Document', value: shown(summary.title) });
  if (summary.issuer) facts.push({ label: 'From', value: shown(summary.issuer) });
  if (summary.counterparty) facts.push({ label: 'To', value: shown(summary.counterparty) });
  if (summary.amount !== null) {
    const amount = Number(summary.amount);
    facts.push({
      label: 'Total',
      value: Number.isFinite(amount) ? formatAmount(amount, summary.currency) : summary.amount,
    });
  }
  if (summary.issue_date) facts.push({ label: 'Issued', value: formatDay(summary.issue_date) });
  if (summary.due_date) facts.push({ label: 'Due', value: formatDay(summary.due_date) });
  return facts;
}

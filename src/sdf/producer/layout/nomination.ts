import type { Block, DocumentLayout, Row } from './blocks.js';
import { formatMoney, formatScalar, humanize, isMoney, isRecord } from './format.js';
import { buildTable, pick, remainingBlocks, rowsOf } from './generic.js';
import { letterhead, partyRows } from './parties.js';

const FACTS = [
  { names: ['issue_date', 'date'], label: 'Issue date' },
  { names: ['submitted_at', 'created_at'], label: 'Submitted at' },
  { names: ['contract_ref', 'contract_reference'], label: 'Contract reference' },
  { names: ['nomination_ref', 'reference'], label: 'Reference' },
  { names: ['gas_day', 'delivery_day'], label: 'Gas day' },
  { names: ['network_point', 'point', 'interconnection_point'], label: 'Network point' },
  { names: ['direction'], label: 'Direction' },
  { names: ['counterparty_point', 'counterparty'], label: 'Counterparty' },
] as const;

const PORTS = [
  { key: 'port_of_loading', role: 'Loading' },
  { key: 'port_of_discharge', role: 'Discharge' },
] as const;

/** A quantity with its unit on one line ("75000 MT", tolerance "5 %"), the rest as fields. */
function quantityRows(value: Record<string, unknown>): Row[] {
  const { quantity, unit, tolerance, tolerance_unit, rate, rate_unit, ...rest } = value;
  const rows: Row[] = [];
  const withUnit = (v: unknown, u: unknown): string => [formatScalar(v), formatScalar(u)].filter((s) => s).join(' ');
  const restRows = rowsOf(rest);
  // The description first, as a reader expects it.
  const description = restRows.findIndex((r) => r.label === 'Description');
  if (description >= 0) rows.push(...restRows.splice(description, 1));
  if (quantity !== undefined) rows.push({ label: 'Quantity', text: withUnit(quantity, unit), bold: true });
  else if (unit !== undefined) rows.push({ label: 'Unit', text: formatScalar(unit) });
  if (tolerance !== undefined) rows.push({ label: 'Tolerance', text: `± ${withUnit(tolerance, tolerance_unit)}` });
  if (rate !== undefined)
    rows.push({ label: 'Rate', text: withUnit(isMoney(rate) ? formatMoney(rate) : rate, rate_unit) });
  return [...rows, ...restRows];
}

/**
 * Nominations, for gas (gas day, network point, direction, hourly quantities and their unit) as for
 * cargo (vessel, laycan, ports, cargo quantity): who nominates to whom, the period and points, the
 * quantities with their units, then the rest.
 */
export function nominationLayout(data: Record<string, unknown>): DocumentLayout {
  const shown = new Set<string>(['document_type']);
  const use = (names: readonly string[]): unknown => {
    const key = pick(data, names);
    if (key === undefined) return undefined;
    shown.add(key);
    return data[key];
  };
  const blocks: Block[] = [];
  const issuer = use(['shipper', 'cargo_owner', 'issuer', 'nominator']);
  const head = letterhead(issuer);
  if (head) blocks.push(head);
  blocks.push({ kind: 'title', text: 'Nomination' });

  const number = use(['nomination_number', 'nomination_id', 'number']);
  const facts: Row[] = [];
  if (number !== undefined) facts.push({ label: 'Nomination number', text: formatScalar(number), bold: true });
  for (const fact of FACTS) {
    const value = use(fact.names);
    if (value !== undefined && !isRecord(value)) facts.push({ label: fact.label, text: formatScalar(value) });
  }
  const laycan = data.laycan;
  if (isRecord(laycan) && laycan.start !== undefined && laycan.end !== undefined && Object.keys(laycan).length === 2) {
    shown.add('laycan');
    facts.push({ label: 'Laycan', text: `${formatScalar(laycan.start)} to ${formatScalar(laycan.end)}` });
  }
  const recipient = use(['agent', 'recipient', 'transmission_system_operator', 'tso']);
  const columns = [];
  if (recipient !== undefined) columns.push({ heading: 'To', rows: partyRows(recipient) });
  columns.push({ rows: facts });
  blocks.push({ kind: 'columns', columns });
  if (!head && issuer !== undefined) {
    blocks.push({ kind: 'heading', text: 'From' }, { kind: 'columns', columns: [{ rows: partyRows(issuer) }] });
  }

  const vessel = use(['vessel']);
  if (vessel !== undefined)
    blocks.push({ kind: 'heading', text: 'Vessel' }, { kind: 'columns', columns: [{ rows: rowsOf(vessel) }] });

  const ports = PORTS.filter((p) => isRecord(data[p.key]));
  if (ports.length > 0) {
    const records = ports.map((p) => data[p.key] as Record<string, unknown>);
    const keys = [...new Set(records.flatMap((r) => Object.keys(r)))];
    const columns = [
      { header: 'Port', values: ports.map((p) => p.role) },
      ...keys.map((k) => ({ header: humanize(k), values: records.map((r) => r[k]) })),
    ];
    for (const p of ports) shown.add(p.key);
    blocks.push({ kind: 'heading', text: 'Ports' }, { kind: 'table', table: buildTable(columns, ports.length) });
  }

  for (const key of ['cargo', 'freight']) {
    const value = data[key];
    if (!isRecord(value)) continue;
    shown.add(key);
    blocks.push(
      { kind: 'heading', text: humanize(key) },
      { kind: 'columns', columns: [{ rows: quantityRows(value) }] },
    );
  }

  const hourly = pick(data, ['hourly_quantities', 'quantities']);
  const unit = data.unit;
  if (
    hourly &&
    Array.isArray(data[hourly]) &&
    (data[hourly] as unknown[]).every((v) => typeof v === 'number' || typeof v === 'string')
  ) {
    const values = data[hourly] as unknown[];
    shown.add(hourly);
    const header = typeof unit === 'string' ? `Quantity (${unit})` : 'Quantity';
    if (typeof unit === 'string') shown.add('unit');
    const table = buildTable(
      [
        { header: 'Hour', values: values.map((_, i) => i + 1), align: 'left' },
        { header, values },
      ],
      values.length,
    );
    blocks.push({ kind: 'heading', text: humanize(hourly) }, { kind: 'table', table: { ...table, compact: true } });
  }

  const notes = pick(data, ['notes', 'remarks']);
  if (notes !== undefined && typeof data[notes] === 'string') {
    shown.add(notes);
    blocks.push({ kind: 'heading', text: humanize(notes) }, { kind: 'paragraph', text: data[notes] });
  }
  blocks.push(...remainingBlocks(data, shown));
  const footer = number === undefined ? 'Nomination' : `Nomination ${formatScalar(number)}`;
  return { title: footer, footer, blocks };
}

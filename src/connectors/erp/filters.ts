/**
 * C2: values put into an OData `$filter` or an Oracle `q=` are escaped, so a reference such as
 * `X' or '1'='1` stays one string literal and never becomes part of the expression.
 */

/** OData V2 string literal: single quotes around, a quote inside doubled (OData ABNF `SQUOTE-in-string`). */
export function odataString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** `Field eq 'value' and ...` from pairs; the field names are ours, the values are escaped. */
export function odataEquals(pairs: readonly [string, string][]): string {
  return pairs.map(([field, value]) => `${field} eq ${odataString(value)}`).join(' and ');
}

/**
 * Oracle REST `q=` (row-match expression): values in single quotes with a quote inside doubled, so
 * neither `'` nor the `;` / ` or ` / ` and ` separators inside a value can end the literal.
 */
export function oracleString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

export function oracleEquals(pairs: readonly [string, string][]): string {
  return pairs.map(([field, value]) => `${field}=${oracleString(value)}`).join(' and ');
}

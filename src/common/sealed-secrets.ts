import { Injectable } from '@nestjs/common';

/** A column holding CryptoBox-sealed values, with how its associated data is derived from the row. */
export interface SealedColumn {
  table: string;
  column: string;
  /** Row columns (besides `id`) the associated data is made from. */
  inputs: string[];
  associatedData: (row: Record<string, string>) => string | undefined;
}

/**
 * S7: every column in the database that holds a secret sealed under the master key. The module that
 * seals a kind of secret registers its column here, with the associated data it seals with, so master-key
 * rotation covers it without knowing the module.
 */
@Injectable()
export class SealedSecrets {
  private readonly registered = new Map<string, SealedColumn>();

  register(column: SealedColumn): void {
    this.registered.set(`${column.table}.${column.column}`, column);
  }

  /** In name order, so a rotation's report reads the same whatever order the modules started in. */
  columns(): SealedColumn[] {
    return [...this.registered.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, column]) => column);
  }
}

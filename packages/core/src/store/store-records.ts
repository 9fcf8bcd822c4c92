import type { Summary } from '../compaction/summary.js';
import { MemoryError } from '../errors/memory-error.js';
import type { Fact } from '../facts/fact.js';
import type { MemoryFile } from '../files/memory-file.js';
import type { Entity, Relation } from '../graph/entity.js';
import type { Message } from '../messages/message.js';
import type { Scope } from '../messages/scope.js';
import type { UsageRecord } from '../usage/usage.js';
import type { CallOptions, Conversation } from './store.js';

/**
 * One stored row of a store, in the port's own types, as `Store.exportRecords` gives it and
 * `Store.importRecords` takes it: a whole store moves between adapters as a stream of these. Not records:
 * jobs (a queue, not memory), vectors (each store keeps them in its own index; re-embed the target) and
 * derived search data (FTS rows, tsvectors, BM25 statistics), which an import rebuilds from the messages.
 */
export type StoreRecord =
  /** A conversation with its counters, watermark and metadata, before any row that hangs on it. */
  | { readonly kind: 'conversation'; readonly conversation: Conversation }
  /** A message with its id, seq, time, tokens, metadata and idempotency key as stored. */
  | { readonly kind: 'message'; readonly scope: Scope; readonly message: Message }
  /** One entry of the usage ledger, in the order written (the target numbers positions afresh, in the same order). */
  | { readonly kind: 'usage'; readonly scope: Scope; readonly usage: UsageRecord }
  /** A summary version with its id, level, range and provenance. */
  | { readonly kind: 'summary'; readonly summary: Summary }
  /** A named progress mark of a conversation's background work. */
  | { readonly kind: 'cursor'; readonly scope: Scope; readonly name: string; readonly position: number }
  /** A fact with its validity and supersession link, in the order written. */
  | { readonly kind: 'fact'; readonly fact: Fact }
  /**
   * An entity, and the lower-cased names (its name and aliases) that resolve to it in the store's name
   * index: a name two entities carry resolves to the one that claimed it first.
   */
  | { readonly kind: 'entity'; readonly entity: Entity; readonly names: readonly string[] }
  /** A relation between two entities of its user. */
  | { readonly kind: 'relation'; readonly relation: Relation }
  /** A memory file with its version and times. */
  | { readonly kind: 'memoryFile'; readonly file: MemoryFile };

/** The tables an export reads and an import writes, parents first (`entity_names` are the entity records' `names`). */
export const storeRecordTables = Object.freeze([
  'conversations',
  'messages',
  'usage',
  'summaries',
  'cursors',
  'facts',
  'entities',
  'entity_names',
  'relations',
  'memory_files',
] as const);

/** A table of {@link storeRecordTables}. */
export type StoreRecordTable = (typeof storeRecordTables)[number];

/** Rows per table, for every table of {@link storeRecordTables}. */
export type StoreRecordCounts = Readonly<Record<StoreRecordTable, number>>;

/** Options of `Store.exportRecords`. */
export interface ExportRecordsOptions extends CallOptions {
  /** Most records per page (each page holds records of one table); 1–10,000, default 1,000. */
  readonly pageSize?: number;
}

/** Options of `Store.importRecords`. */
export interface ImportRecordsOptions extends CallOptions {
  /** Delete everything the store holds (jobs and vectors too) in the import's transaction first; default false: a store with rows is refused. */
  readonly replace?: boolean;
}

const tableOfKind: Readonly<Record<StoreRecord['kind'], StoreRecordTable>> = {
  conversation: 'conversations',
  message: 'messages',
  usage: 'usage',
  summary: 'summaries',
  cursor: 'cursors',
  fact: 'facts',
  entity: 'entities',
  relation: 'relations',
  memoryFile: 'memory_files',
};

/** Counts with every table at zero. */
export function emptyRecordCounts(): Record<StoreRecordTable, number> {
  return Object.fromEntries(storeRecordTables.map((table) => [table, 0])) as Record<StoreRecordTable, number>;
}

/** The table a record is a row of (an entity's names are rows of `entity_names` besides); `undefined` for a record of no known kind. */
export function tableOfRecord(record: StoreRecord): StoreRecordTable | undefined {
  return tableOfKind[record?.kind];
}

/** Adds the rows `records` stand for to `counts` (an entity counts its names as `entity_names` rows); `invalid_input` for a record of no known kind. */
export function countRecords(counts: Record<StoreRecordTable, number>, records: readonly StoreRecord[]): void {
  for (const record of records) {
    const table = tableOfRecord(record);
    if (table === undefined)
      throw new MemoryError('invalid_input', `unknown store record kind ${JSON.stringify(record?.kind)}`, {
        details: { field: 'kind' },
      });
    counts[table] += 1;
    if (record.kind === 'entity') counts.entity_names += record.names.length;
  }
}

/** Checks an export's page size (default 1,000); `invalid_input` otherwise. */
export function resolveExportPageSize(pageSize: number | undefined): number {
  const size = pageSize ?? 1000;
  if (Number.isSafeInteger(size) && size >= 1 && size <= 10_000) return size;
  throw new MemoryError('invalid_input', 'pageSize must be an integer from 1 to 10000', {
    details: { field: 'pageSize' },
  });
}

/** The `invalid_input` of an import into a store that holds rows without `replace`; nothing was written. */
export function storeNotEmpty(rows: number): MemoryError {
  return new MemoryError(
    'invalid_input',
    `the store already holds ${rows} rows; import with replace to delete them first`,
    {
      details: { field: 'replace', rows },
    },
  );
}

/** The sum of every table's count. */
export function totalRecordCount(counts: StoreRecordCounts): number {
  return storeRecordTables.reduce((sum, table) => sum + counts[table], 0);
}

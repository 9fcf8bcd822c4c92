import { MemoryError, type Embedder, type Store } from '@mnemo/core';
import {
  countRecords,
  embedConversation,
  emptyRecordCounts,
  storeRecordTables,
  tableOfRecord,
  type StoreRecord,
  type StoreRecordTable,
} from '@mnemo/core/internals';
import { describeDatabase, openCliStore } from '../store/open-cli-store.js';

/** Options of {@link copyStore}. */
export interface CopyStoreOptions {
  /** Source: a SQLite file or a `postgres://` URL (resolved). It is only read. */
  readonly from: string;
  /** Target: a SQLite file or a `postgres://` URL (resolved), created and migrated when missing. */
  readonly to: string;
  /** Replace a target that already holds data (its rows are deleted in the copy's transaction); default false: refuse it. */
  readonly force?: boolean;
  /** Embeds every copied message on the target once the rows are in; default none (run `mnemo reembed` later). */
  readonly embedder?: Embedder;
  /** Records read per page; default 2,000. */
  readonly pageSize?: number;
  /** Called as rows are copied (`copy`) and messages embedded (`embed`). */
  readonly onProgress?: (progress: CopyProgress) => void;
}

/** Where a copy is. */
export interface CopyProgress {
  readonly phase: 'copy' | 'embed';
  readonly done: number;
  /** Rows to go through; known while embedding, absent while copying (the source is streamed, its count known at the end). */
  readonly total?: number;
  /** The table being copied, or `messages` while embedding. */
  readonly table: string;
}

/** What {@link copyStore} did: per table the rows in the source snapshot and in the target afterwards (equal, or it throws). */
export interface CopyReport {
  readonly from: string;
  readonly to: string;
  readonly replaced: boolean;
  readonly tables: readonly { readonly table: string; readonly source: number; readonly target: number }[];
  /** Messages embedded on the target, and with which model; absent without an embedder. */
  readonly embedded?: { readonly model: string; readonly messages: number };
}

/**
 * Copies a whole store, every tenant, from one database to another (SQLite ↔ PostgreSQL, or the same
 * kind) through the `Store` port: the source's `exportRecords` (one snapshot) streams into the target's
 * `importRecords` (one transaction), so a failed copy leaves the target as it was. Conversations,
 * messages (ids, seqs, times, metadata and idempotency keys as stored), the usage ledger, summaries (ids,
 * levels, ranges, provenance) with the watermark on each conversation, cursors, facts with their history,
 * entities with their name index, relations and memory files arrive as stored. Jobs are not copied, and
 * vectors are not either: the target's messages are embedded afresh with `embedder`. Throws
 * `invalid_input` for the same database twice, `:memory:`, or a non-empty target without `force`, and
 * `storage_failed` when the counts differ afterwards.
 */
export async function copyStore(options: CopyStoreOptions): Promise<CopyReport> {
  if (options.from === options.to) {
    throw new MemoryError(
      'invalid_input',
      `--from and --to are the same database (${describeDatabase(options.from)})`,
      {
        details: { field: 'to' },
      },
    );
  }
  for (const [field, db] of [
    ['from', options.from],
    ['to', options.to],
  ] as const) {
    if (db === ':memory:')
      throw new MemoryError('invalid_input', 'mnemo copy needs a database file or URL, not :memory:', {
        details: { field },
      });
  }
  // One connection each: the export's snapshot and the import's transaction.
  const source = await openCliStore(options.from, { readonly: true, poolMax: 1 });
  const counts = emptyRecordCounts();
  const tenants = new Set<string>();
  let copied = 0;
  let target: Store | undefined;
  let imported: Readonly<Record<StoreRecordTable, number>>;
  let replaced = false;
  try {
    target = await openCliStore(options.to, { poolMax: 1 });
    // Counts the source's rows as they stream past: the export is the snapshot.
    const counted = async function* (pages: AsyncIterable<StoreRecord[]>): AsyncIterable<StoreRecord[]> {
      for await (const page of pages) {
        countRecords(counts, page);
        for (const record of page) if (record.kind === 'conversation') tenants.add(record.conversation.tenantId);
        copied += page.length;
        if (page[0] !== undefined)
          options.onProgress?.({ phase: 'copy', done: copied, table: tableOfRecord(page[0]) ?? '' });
        yield page;
      }
    };
    replaced = options.force === true && (await holdsRows(target));
    try {
      imported = await target.importRecords(counted(source.exportRecords({ pageSize: options.pageSize ?? 2000 })), {
        replace: options.force === true,
      });
    } catch (error) {
      // The target's import refuses a store with rows, in its transaction, before the source is read.
      if (error instanceof MemoryError && error.code === 'invalid_input' && error.details?.field === 'replace') {
        throw new MemoryError(
          'invalid_input',
          `${describeDatabase(options.to)} already holds ${Number(error.details.rows)} rows; pass --force to replace its contents`,
          {
            details: { field: 'to' },
          },
        );
      }
      throw error;
    }
  } finally {
    await source.close();
    await target?.close();
  }
  const tables = storeRecordTables.map((table) => ({ table, source: counts[table], target: imported[table] }));
  const differing = tables.filter((row) => row.source !== row.target);
  if (differing.length > 0) {
    throw new MemoryError(
      'storage_failed',
      `the copy's counts differ: ${differing.map((row) => `${row.table} ${row.source} → ${row.target}`).join(', ')}`,
      {
        details: { tables: differing },
      },
    );
  }
  const report = { from: describeDatabase(options.from), to: describeDatabase(options.to), replaced, tables };
  if (options.embedder === undefined) return report;
  const messages = counts.messages;
  const embedded = await embedAll(options.to, options.embedder, [...tenants], messages, options.onProgress);
  return { ...report, embedded: { model: options.embedder.model, messages: embedded } };
}

// Whether `--force` replaces anything (the report says so): the target's export stops at its first record.
async function holdsRows(target: Store): Promise<boolean> {
  for await (const page of target.exportRecords({ pageSize: 1 })) return page.length > 0;
  return false;
}

// Through the Store port, as the embed job does: each store writes vectors into its own index.
async function embedAll(
  db: string,
  embedder: Embedder,
  tenants: readonly string[],
  total: number,
  onProgress: CopyStoreOptions['onProgress'],
): Promise<number> {
  const store: Store = await openCliStore(db);
  let embedded = 0;
  try {
    for (const tenantId of tenants) {
      let cursor: string | undefined;
      do {
        const page = await store.listConversations(
          { tenantId },
          { limit: 500, ...(cursor === undefined ? {} : { cursor }) },
        );
        for (const conversation of page.items) {
          embedded += await embedConversation({ store, embedder }, conversation);
          onProgress?.({ phase: 'embed', done: embedded, total, table: 'messages' });
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    }
  } finally {
    await store.close();
  }
  return embedded;
}

import { embedConversation, MemoryError, type Embedder, type Store } from '@mnemo/core';
import { isPostgresUrl } from '../config/cli-config.js';
import { describeDatabase, openCliStore } from '../store/open-cli-store.js';
import { copyTables, type CopyEndpoint, type CopyValue } from './copy-tables.js';
import { openPostgresCopyEndpoint } from './postgres-copy-endpoint.js';
import { openSqliteCopyEndpoint } from './sqlite-copy-endpoint.js';

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
  /** Rows read per page; default 2,000. */
  readonly pageSize?: number;
  /** Called as rows are copied (`copy`) and messages embedded (`embed`). */
  readonly onProgress?: (progress: CopyProgress) => void;
}

/** Where a copy is. */
export interface CopyProgress {
  readonly phase: 'copy' | 'embed';
  readonly done: number;
  readonly total: number;
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
 * kind): conversations, messages (ids, seqs, times, metadata and idempotency keys as stored), the usage
 * ledger, summaries (ids, levels, ranges, provenance) with the watermark on each conversation, cursors,
 * facts with their history, entities, relations and memory files. The source is read in one snapshot
 * and the target written in one transaction: a failed copy leaves the target as it was. Jobs are not
 * copied, and vectors are not either: the target's messages are embedded afresh with `embedder`.
 * Throws `invalid_input` for the same database twice or a non-empty target without `force`, and
 * `storage_failed` when the counts differ afterwards.
 */
export async function copyStore(options: CopyStoreOptions): Promise<CopyReport> {
  if (options.from === options.to) {
    throw new MemoryError('invalid_input', `--from and --to are the same database (${describeDatabase(options.from)})`, { details: { field: 'to' } });
  }
  const pageSize = options.pageSize ?? 2000;
  const source = await openEndpoint(options.from, 'source');
  let target: CopyEndpoint | undefined;
  const tenants = new Set<string>();
  const tables: { table: string; source: number; target: number }[] = [];
  let replaced = false;
  try {
    target = await openEndpoint(options.to, 'target');
    await source.beginRead();
    await target.beginWrite();
    const counts = new Map<string, number>();
    for (const table of copyTables) counts.set(table.name, await source.count(table));
    const present = await countRows(target);
    if (present > 0 && options.force !== true) {
      throw new MemoryError('invalid_input', `${target.description} already holds ${present} rows; pass --force to replace its contents`, { details: { field: 'to' } });
    }
    if (present > 0) await target.clear();
    replaced = present > 0;
    const total = [...counts.values()].reduce((sum, count) => sum + count, 0);
    let done = 0;
    for (const table of copyTables) {
      let after: readonly CopyValue[] | undefined;
      do {
        const page = await source.readPage(table, after, pageSize);
        await target.write(table, page.rows);
        if (table.name === 'conversations') for (const row of page.rows) tenants.add(String(row[0]));
        done += page.rows.length;
        options.onProgress?.({ phase: 'copy', done, total, table: table.name });
        after = page.nextAfter;
      } while (after !== undefined);
    }
    await target.commit();
    // Counted after the commit, outside the copy's transaction: what any reader of the target now sees.
    for (const table of copyTables) tables.push({ table: table.name, source: counts.get(table.name) ?? 0, target: await target.count(table) });
  } finally {
    await source.end();
    await target?.end();
  }
  const differing = tables.filter((row) => row.source !== row.target);
  if (differing.length > 0) {
    throw new MemoryError('storage_failed', `the copy's counts differ: ${differing.map((row) => `${row.table} ${row.source} → ${row.target}`).join(', ')}`, {
      details: { tables: differing },
    });
  }
  const report = { from: describeDatabase(options.from), to: describeDatabase(options.to), replaced, tables };
  if (options.embedder === undefined) return report;
  const messages = tables.find((row) => row.table === 'messages')?.source ?? 0;
  const embedded = await embedAll(options.to, options.embedder, [...tenants], messages, options.onProgress);
  return { ...report, embedded: { model: options.embedder.model, messages: embedded } };
}

function openEndpoint(db: string, role: 'source' | 'target'): Promise<CopyEndpoint> {
  return isPostgresUrl(db) ? openPostgresCopyEndpoint({ url: db, role }) : openSqliteCopyEndpoint({ path: db, role });
}

async function countRows(endpoint: CopyEndpoint): Promise<number> {
  let total = 0;
  for (const table of copyTables) total += await endpoint.count(table);
  return total;
}

// Through the Store port, as the embed job does: each store writes vectors into its own index.
async function embedAll(db: string, embedder: Embedder, tenants: readonly string[], total: number, onProgress: CopyStoreOptions['onProgress']): Promise<number> {
  const store: Store = await openCliStore(db);
  let embedded = 0;
  try {
    for (const tenantId of tenants) {
      let cursor: string | undefined;
      do {
        const page = await store.listConversations({ tenantId }, { limit: 500, ...(cursor === undefined ? {} : { cursor }) });
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

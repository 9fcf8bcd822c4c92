/** How a column's values travel between the stores: SQLite keeps times as epoch ms and JSON as text, PostgreSQL as timestamptz and json. */
export type CopyColumnKind = 'text' | 'integer' | 'real' | 'time' | 'json';

/** One column both stores have under the same name. */
export interface CopyColumn {
  readonly name: string;
  readonly kind: CopyColumnKind;
}

/** A value in transit: text, a number (times as epoch milliseconds), or null. JSON travels as its text, unchanged. */
export type CopyValue = string | number | null;

/**
 * One table both stores have (same name, same columns apart from each store's own row order and
 * derived columns), and the columns that page through it in insertion order. `order: 'position'` means
 * the store's own insertion counter (SQLite `rowid`, PostgreSQL `position`), which the target assigns
 * afresh, in the same order; otherwise rows page by their primary key.
 */
export interface CopyTable {
  readonly name: string;
  readonly columns: readonly CopyColumn[];
  readonly order: 'position' | readonly string[];
}

const text = (name: string): CopyColumn => ({ name, kind: 'text' });
const integer = (name: string): CopyColumn => ({ name, kind: 'integer' });
const time = (name: string): CopyColumn => ({ name, kind: 'time' });
const json = (name: string): CopyColumn => ({ name, kind: 'json' });
const conversationKey = [text('tenant_id'), text('user_id'), text('conversation_id')];

/**
 * Every table `mnemo copy` moves, parents first (the foreign keys need conversations before messages).
 * Not copied: jobs (a queue, not memory: the target's appends queue what they need), vectors (re-embedded
 * on the target; each store keeps them in its own index format) and the stores' derived search data
 * (FTS rows, tsvectors, BM25 statistics), which each target rebuilds from the rows.
 */
export const copyTables: readonly CopyTable[] = Object.freeze([
  {
    name: 'conversations',
    columns: [
      ...conversationKey,
      time('created_at'),
      time('updated_at'),
      integer('message_count'),
      integer('total_tokens'),
      integer('summarized_through_seq'),
      integer('summarized_tokens'),
      json('metadata'),
    ],
    order: ['tenant_id', 'user_id', 'conversation_id'],
  },
  {
    name: 'messages',
    columns: [
      ...conversationKey,
      integer('seq'),
      text('id'),
      text('role'),
      text('content'),
      text('name'),
      json('tool_calls'),
      text('tool_call_id'),
      time('created_at'),
      json('metadata'),
      integer('tokens'),
      text('idempotency_key'),
    ],
    order: ['tenant_id', 'user_id', 'conversation_id', 'seq'],
  },
  {
    name: 'usage',
    columns: [...conversationKey, text('kind'), text('policy'), integer('sent_tokens'), integer('full_history_tokens'), integer('input_tokens'), integer('output_tokens'), time('created_at')],
    order: 'position',
  },
  {
    name: 'summaries',
    columns: [
      ...conversationKey,
      text('id'),
      integer('level'),
      integer('from_seq'),
      integer('to_seq'),
      text('content'),
      integer('tokens'),
      json('folded_summary_ids'),
      text('summarizer'),
      integer('input_tokens'),
      integer('output_tokens'),
      text('fallback_reason'),
      time('created_at'),
    ],
    order: 'position',
  },
  {
    name: 'cursors',
    columns: [...conversationKey, text('name'), integer('position')],
    order: ['tenant_id', 'user_id', 'conversation_id', 'name'],
  },
  {
    name: 'facts',
    columns: [
      text('tenant_id'),
      text('user_id'),
      text('id'),
      text('subject'),
      text('attribute'),
      text('value'),
      text('text'),
      { name: 'confidence', kind: 'real' },
      time('valid_from'),
      time('valid_to'),
      text('superseded_by'),
      text('source_conversation_id'),
      json('source_seqs'),
      text('extractor'),
      time('created_at'),
    ],
    order: 'position',
  },
  {
    name: 'entities',
    columns: [text('tenant_id'), text('user_id'), text('id'), text('name'), text('type'), json('aliases'), text('description'), time('created_at'), time('updated_at')],
    order: 'position',
  },
  {
    name: 'entity_names',
    columns: [text('tenant_id'), text('user_id'), text('name'), text('entity_id')],
    order: ['tenant_id', 'user_id', 'name'],
  },
  {
    name: 'relations',
    columns: [
      text('tenant_id'),
      text('user_id'),
      text('id'),
      text('subject_id'),
      text('predicate'),
      text('object_id'),
      time('valid_from'),
      time('valid_to'),
      text('source_conversation_id'),
      json('source_seqs'),
      time('created_at'),
    ],
    order: 'position',
  },
  {
    name: 'memory_files',
    columns: [text('tenant_id'), text('user_id'), text('path'), text('content'), integer('version'), time('created_at'), time('updated_at')],
    order: ['tenant_id', 'user_id', 'path'],
  },
]);

/** One page of a table read in order: the rows (values in `columns` order) and the key to read the next page after. */
export interface CopyPage {
  readonly rows: readonly (readonly CopyValue[])[];
  /** Absent on the last page. */
  readonly nextAfter?: readonly CopyValue[];
}

/**
 * One side of a copy, raw rows of one store in the neutral form. Reads run in one snapshot (a read
 * transaction) between `beginRead` and `end`; writes in one transaction between `beginWrite` and
 * `commit`, so a copy lands whole or not at all.
 */
export interface CopyEndpoint {
  /** The database as printed (password masked). */
  readonly description: string;
  beginRead(): Promise<void>;
  beginWrite(): Promise<void>;
  count(table: CopyTable): Promise<number>;
  readPage(table: CopyTable, after: readonly CopyValue[] | undefined, limit: number): Promise<CopyPage>;
  /** Removes every row of the store (for `--force`), inside the write transaction. */
  clear(): Promise<void>;
  write(table: CopyTable, rows: readonly (readonly CopyValue[])[]): Promise<void>;
  /** Rebuilds what the store derives from copied rows, then commits. */
  commit(): Promise<void>;
  /** Ends a read snapshot, or rolls back an uncommitted write, and closes the connection. */
  end(): Promise<void>;
}

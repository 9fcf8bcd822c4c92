// The search paths mnemo had before issue 11's vector and keyword work, rebuilt beside the current store on
// the same data so bench:recall can time before and after back to back, query by query, in one process:
// - SQLite vectors: a float32 vec0 table per model partitioned by tenant and user (the old `vectors_<id>`
//   layout), searched by sqlite-vec's exact scan of the user's partition, each hit's message read by rowid.
// - SQLite keyword search: the contentless FTS5 table (porter unicode61) with an owner token per user,
//   filled by a trigger as the store's own was until decision 0027, and its top-k `bm25()` query.
// - PostgreSQL keyword search: the unpruned BM25 statement (every message holding any query word scored),
//   which the store still runs for searches with conversation or time filters.
// PostgreSQL's HNSW vector search did not change.
import type { Store, UserScope } from '@mnemo/core';
import { messageColumns, type MessageRow, type SearchHit, type SearchOptions } from '@mnemo/core/store-kit';
import Database from 'better-sqlite3';
import pg from 'pg';
import * as sqliteVec from 'sqlite-vec';
import { searchKeywordIndexed } from '../packages/postgres/dist/postgres-keyword-search.js';
import { postgresTables } from '../packages/postgres/dist/postgres-tables.js';
import { toMessage } from '../packages/sqlite/dist/sqlite-message-store.js';

/** A store's two searches as they were before, and the store itself with them swapped in (for recall()). */
export interface BeforeSearch {
  readonly store: Store;
  /** Adds vectors of stored messages (by their seq within the conversation) to the old layout. */
  addVectors(conversationId: string, seqs: readonly number[], vectors: readonly Float32Array[]): void;
  close(): Promise<void>;
}

/** The old exact vector scan and the old FTS5 keyword search on their own connection to the SQLite file at `path` (created before the ingest, so the trigger indexes every message). */
export function createSqliteBefore(store: Store, path: string, user: UserScope, dimensions: number): BeforeSearch {
  const database = new Database(path);
  sqliteVec.load(database);
  database.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS bench_before_vectors USING vec0(tenant_id text partition key, user_id text partition key,
    conversation_id text, created_at integer, embedding float[${dimensions}] distance_metric=cosine)`);
  const message = database.prepare(
    'SELECT rowid, created_at FROM messages WHERE tenant_id = ? AND user_id = ? AND conversation_id = ? AND seq = ?',
  );
  const insert = database.prepare(
    'INSERT INTO bench_before_vectors (rowid, tenant_id, user_id, conversation_id, created_at, embedding) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const nearest = database.prepare(
    'SELECT rowid, distance FROM bench_before_vectors WHERE embedding MATCH ? AND k = ? AND tenant_id = ? AND user_id = ?',
  );
  const byRowid = database.prepare(`SELECT ${messageColumns}, conversation_id FROM messages WHERE rowid = ?`);
  database.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS bench_before_fts USING fts5(owner, content, content='', contentless_delete=1,
      tokenize='porter unicode61 remove_diacritics 2');
    CREATE TRIGGER IF NOT EXISTS bench_before_fts_insert AFTER INSERT ON messages BEGIN
      INSERT INTO bench_before_fts (rowid, owner, content) VALUES (new.rowid, 'o' || hex(new.tenant_id || char(31) || new.user_id), new.content);
    END;`);
  const keywordTop = database.prepare(`SELECT ${messageColumns
    .split(', ')
    .map((column) => `m.${column}`)
    .join(', ')}, m.conversation_id, f.score AS score
    FROM (SELECT rowid, -bm25(bench_before_fts, 0.0, 1.0) AS score FROM bench_before_fts WHERE bench_before_fts MATCH ? ORDER BY score DESC, rowid DESC LIMIT ?) f
    CROSS JOIN messages m ON m.rowid = f.rowid
    WHERE m.tenant_id = ? AND m.user_id = ?
    ORDER BY score DESC, m.created_at DESC, m.seq DESC`);
  const searchKeyword = async (
    scope: UserScope,
    terms: readonly string[],
    options: SearchOptions,
  ): Promise<SearchHit[]> => {
    const words = terms.map((term) => term.replace(/"/g, '')).filter((term) => term.length > 0);
    if (words.length === 0) return [];
    const owner = `o${Buffer.from(`${scope.tenantId}\u001f${scope.userId}`, 'utf8').toString('hex').toUpperCase()}`;
    const rows = keywordTop.all(
      `owner : "${owner}" AND (${words.map((word) => `"${word}"`).join(' OR ')})`,
      options.k,
      scope.tenantId,
      scope.userId,
    ) as (MessageRow & { conversation_id: string; score: number })[];
    return rows.map((row) => ({ conversationId: row.conversation_id, message: toMessage(row), score: row.score }));
  };
  const searchVector = async (
    scope: UserScope,
    _model: string,
    vector: Float32Array,
    options: SearchOptions,
  ): Promise<SearchHit[]> => {
    const rows = nearest.all(
      Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength),
      options.k,
      scope.tenantId,
      scope.userId,
    ) as {
      rowid: number;
      distance: number;
    }[];
    return rows.map(({ rowid, distance }) => {
      const row = byRowid.get(rowid) as MessageRow & { conversation_id: string };
      return { conversationId: row.conversation_id, message: toMessage(row), score: 1 - distance };
    });
  };
  return {
    store: withSearches(store, { searchKeyword, searchVector }),
    addVectors(conversationId, seqs, vectors) {
      database.transaction(() => {
        seqs.forEach((seq, index) => {
          const row = message.get(user.tenantId, user.userId, conversationId, seq) as {
            rowid: number;
            created_at: number;
          };
          const vector = vectors[index]!;
          insert.run(
            BigInt(row.rowid),
            user.tenantId,
            user.userId,
            conversationId,
            BigInt(row.created_at),
            Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength),
          );
        });
      })();
    },
    async close() {
      database.close();
    },
  };
}

/** The old unpruned keyword statement on its own pool to the PostgreSQL schema. */
export function createPostgresBefore(store: Store, url: string, schema: string): BeforeSearch {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const tables = postgresTables(schema);
  const searchKeyword = (scope: UserScope, terms: readonly string[], options: SearchOptions) =>
    searchKeywordIndexed(pool, tables, scope, terms, options);
  return {
    store: withSearches(store, { searchKeyword }),
    addVectors() {},
    async close() {
      await pool.end();
    },
  };
}

/** `store` with some of its search methods replaced; every other call goes to the store itself. */
function withSearches(store: Store, replaced: Partial<Pick<Store, 'searchKeyword' | 'searchVector'>>): Store {
  return new Proxy(store, {
    get(target, property) {
      if (property in replaced) return replaced[property as keyof typeof replaced];
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...parameters: unknown[]) => unknown).bind(target) : value;
    },
  });
}

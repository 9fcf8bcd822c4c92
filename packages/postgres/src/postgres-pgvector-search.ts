import type { Message, Scope, UserScope } from '@mnemo/core';
import type { MessageRow, SearchHit, SearchOptions } from '@mnemo/core/store-kit';
import type { PostgresClient, PostgresPool } from './postgres-driver.js';
import { toMessage } from './postgres-message-store.js';
import { newerThan, prefixedMessageColumns, searchFilters, toHit, type HitRow } from './postgres-search-filters.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';
import type { PgvectorNames, VectorTable } from './postgres-vector-tables.js';
import { scopeKey } from './postgres-values.js';

/**
 * `hnsw.ef_search` of one search: the candidate list the HNSW scan keeps, at least 100 and twice the hits
 * asked for, up to pgvector's maximum of 1000. Recall asks for 50 candidates by default: 100.
 */
export function hnswEfSearch(k: number): number {
  return Math.min(1000, Math.max(100, 2 * k));
}

/** A vector as pgvector's text input, `[x,y,…]`: every float32 prints as a decimal that parses back to the same float32. */
export function toVectorLiteral(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
}

/**
 * The nearest-neighbour statement on one pgvector table: an HNSW scan ordered by cosine distance, the
 * tenant, user, conversation and time filters applied to the table's own columns (so they run inside the
 * scan, which `hnsw.iterative_scan` continues until `k` rows pass them), then the messages joined to the
 * `k` survivors. The scan's order is relaxed (`relaxed_order`), so the outer query sorts again, ties newest
 * first. Parameters: `$1` tenant, `$2` user, `$3` the query vector, `$4` k, then the filters.
 */
export function vectorSearchStatement(
  t: PostgresTables,
  table: VectorTable,
  names: PgvectorNames,
  options: SearchOptions,
): { text: string; filterParameters: unknown[] } | undefined {
  const filter = searchFilters(options, 4, 'v');
  if (filter === undefined) return undefined;
  const text = `WITH nearest AS MATERIALIZED (
      SELECT v.conversation_id, v.seq, v.embedding ${names.cosineDistance} $3::${names.type} AS distance
      FROM ${table.name} v
      WHERE v.tenant_id = $1 AND v.user_id = $2 ${filter.clause}
      ORDER BY distance LIMIT $4
    )
    SELECT ${prefixedMessageColumns}, n.conversation_id, 1 - n.distance AS score FROM nearest n
    JOIN ${t.messages} m ON m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = n.conversation_id AND m.seq = n.seq
    ORDER BY n.distance, m.created_at DESC, m.seq DESC`;
  return { text, filterParameters: filter.parameters };
}

/** The session settings of a vector search, for `SELECT` in its transaction: ef_search, and iterative scans (pgvector ≥ 0.8; ignored before). */
export const vectorSearchSettings =
  "SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)";

/** Vector storage and search on pgvector tables (see {@link PostgresVectorTables}); the caller checks models and dimensions. */
export class PostgresPgvectorSearch {
  readonly #pool: PostgresPool;
  readonly #tables: PostgresTables;
  readonly #names: PgvectorNames;

  constructor(pool: PostgresPool, tables: PostgresTables, names: PgvectorNames) {
    this.#pool = pool;
    this.#tables = tables;
    this.#names = names;
  }

  /** Writes vectors of existing messages (locked by the caller's transaction), replacing older ones; the message's time is copied for time filters. */
  async upsert(
    client: PostgresClient,
    scope: Scope,
    table: VectorTable,
    seqs: readonly number[],
    vectors: readonly Float32Array[],
  ): Promise<void> {
    await client.query(
      `INSERT INTO ${table.name} (tenant_id, user_id, conversation_id, seq, created_at, embedding)
       SELECT m.tenant_id, m.user_id, m.conversation_id, m.seq, m.created_at, v.embedding::${this.#names.type}
       FROM unnest($4::bigint[], $5::text[]) AS v (seq, embedding)
       JOIN ${this.#tables.messages} m ON m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = $3 AND m.seq = v.seq
       ON CONFLICT (tenant_id, user_id, conversation_id, seq) DO UPDATE SET embedding = excluded.embedding`,
      [...scopeKey(scope), seqs, vectors.map(toVectorLiteral)],
    );
  }

  /** Messages of a conversation without a row in `table` (among its newest `among`, if given), oldest first. */
  async listUnembedded(scope: Scope, table: VectorTable, limit: number, among?: number): Promise<Message[]> {
    // Bounded on both sides, so the planner cannot hash every vector of the conversation.
    const newest = (column: string) => (among === undefined ? '' : `AND ${newerThan(this.#tables, column, 5)}`);
    const rows = await this.#pool.query<MessageRow>(
      `SELECT ${prefixedMessageColumns} FROM ${this.#tables.messages} m WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = $3 ${newest('m.seq')}
       AND NOT EXISTS (SELECT 1 FROM ${table.name} v WHERE v.tenant_id = m.tenant_id AND v.user_id = m.user_id
         AND v.conversation_id = m.conversation_id AND v.seq = m.seq ${newest('v.seq')})
       ORDER BY m.seq LIMIT $4`,
      [...scopeKey(scope), limit, ...(among === undefined ? [] : [among])],
    );
    return rows.rows.map(toMessage);
  }

  /** The rows of `table`, of one tenant or all. */
  async count(table: VectorTable, tenantId: string | undefined): Promise<number> {
    const result = await this.#pool.query<{ rows: number }>(
      `SELECT count(*)::float8 AS rows FROM ${table.name} WHERE $1::text IS NULL OR tenant_id = $1`,
      [tenantId ?? null],
    );
    return result.rows[0]?.rows ?? 0;
  }

  /** Deletes a tenant's (or one user's) rows of `table`; returns how many. */
  async delete(table: VectorTable, tenantId: string, userId: string | undefined): Promise<number> {
    const result = await this.#pool.query(
      `DELETE FROM ${table.name} WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)`,
      [tenantId, userId ?? null],
    );
    return result.rowCount ?? 0;
  }

  /** Cosine nearest neighbours of one user in `table`, with the HNSW settings of {@link vectorSearchSettings} in the same transaction. */
  async search(
    user: UserScope,
    table: VectorTable,
    vector: Float32Array,
    k: number,
    options: SearchOptions,
  ): Promise<SearchHit[]> {
    const statement = vectorSearchStatement(this.#tables, table, this.#names, options);
    if (statement === undefined) return [];
    const parameters = [user.tenantId, user.userId, toVectorLiteral(vector), k, ...statement.filterParameters];
    return runInTransaction(this.#pool, async (client) => {
      await client.query(vectorSearchSettings, [String(hnswEfSearch(k))]);
      return (await client.query<HitRow>(statement.text, parameters)).rows.map(toHit);
    });
  }
}

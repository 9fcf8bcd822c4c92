import { MemoryError } from '@mnemo/core';
import type { Message, MessageEmbedding, Scope, SearchHit, SearchOptions, UserScope } from '@mnemo/core';
import type { PostgresPool } from './postgres-driver.js';
import { inConversation, messageColumns, toMessage, type MessageRow } from './postgres-message-store.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';
import { checkCount, checkTime, scopeKey } from './postgres-values.js';

type HitRow = MessageRow & { readonly conversation_id: string; readonly score: unknown };

const maxSearchK = 1000;
// Okapi BM25 parameters, the common defaults (and SQLite FTS5's and the in-memory store's).
const k1 = 1.2;
const b = 0.75;
const prefixedColumns = messageColumns
  .split(', ')
  .map((column) => `m.${column}`)
  .join(', ');

function statements(t: PostgresTables) {
  return {
    // Inserted on first use; afterwards the stored dimensions are what every vector of the model must have.
    model: `WITH inserted AS (
        INSERT INTO ${t.embeddingModels} (tenant_id, model, dimensions) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING dimensions
      )
      SELECT dimensions FROM inserted UNION ALL SELECT dimensions FROM ${t.embeddingModels} WHERE tenant_id = $1 AND model = $2`,
    modelDimensions: `SELECT dimensions FROM ${t.embeddingModels} WHERE tenant_id = $1 AND model = $2`,
    // KEY SHARE holds the messages until commit, so an erase cannot remove them under the new vectors.
    lockMessages: `SELECT seq FROM ${t.messages} WHERE ${inConversation} AND seq = ANY($4::bigint[]) FOR KEY SHARE`,
    upsertVectors: `INSERT INTO ${t.messageVectors} (tenant_id, user_id, conversation_id, seq, model, vector, norm)
      SELECT $1, $2, $3, v.seq, $4, v.vector::real[], v.norm FROM unnest($5::bigint[], $6::text[], $7::float8[]) AS v (seq, vector, norm)
      ON CONFLICT (tenant_id, user_id, conversation_id, seq, model) DO UPDATE SET vector = excluded.vector, norm = excluded.norm`,
    selectUnembedded: `SELECT ${prefixedColumns} FROM ${t.messages} m WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = $3
      AND NOT EXISTS (SELECT 1 FROM ${t.messageVectors} v WHERE v.tenant_id = m.tenant_id AND v.user_id = m.user_id
        AND v.conversation_id = m.conversation_id AND v.seq = m.seq AND v.model = $4)
      ORDER BY m.seq LIMIT $5`,
    deleteVectors: `DELETE FROM ${t.messageVectors} WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2) AND ($3::text IS NULL OR model <> $3)`,
  };
}

/**
 * Keyword search (BM25 over English-stemmed lexemes, computed in SQL) and vector search (cosine over
 * `real[]` vectors, computed in SQL), both over one user's messages only. Neither has a dedicated index
 * yet: each scans the user's rows through the tenant-led primary keys.
 */
export class PostgresSearchStore {
  readonly #pool: PostgresPool;
  readonly #tables: PostgresTables;
  readonly #sql: ReturnType<typeof statements>;

  constructor(pool: PostgresPool, tables: PostgresTables) {
    this.#pool = pool;
    this.#tables = tables;
    this.#sql = statements(tables);
  }

  /** Stores or replaces vectors of messages; `not_found` for a message that does not exist, `invalid_input` for mismatched dimensions. */
  async upsertEmbeddings(scope: Scope, model: string, embeddings: readonly MessageEmbedding[]): Promise<void> {
    if (embeddings.length === 0) return;
    const dimensions = embeddings[0]!.vector.length;
    // The last vector given for a seq wins, as if the batch were applied one by one.
    const bySeq = new Map<number, Float32Array>();
    for (const { seq, vector } of embeddings) {
      checkCount('seq', seq);
      checkVector(model, vector, dimensions);
      bySeq.set(seq, vector);
    }
    const seqs = [...bySeq.keys()];
    const key = scopeKey(scope);
    await runInTransaction(this.#pool, async (client) => {
      const stored = Number((await client.query<{ dimensions: unknown }>(this.#sql.model, [scope.tenantId, model, dimensions])).rows[0]?.dimensions);
      if (stored !== dimensions) throw dimensionMismatch(model, stored, dimensions);
      const found = new Set((await client.query<{ seq: unknown }>(this.#sql.lockMessages, [...key, seqs])).rows.map((row) => Number(row.seq)));
      const missing = seqs.find((seq) => !found.has(seq));
      if (missing !== undefined) {
        throw new MemoryError('not_found', `message ${missing} of conversation ${scope.conversationId} does not exist`, { details: { seq: missing } });
      }
      const vectors = [...bySeq.values()];
      await client.query(this.#sql.upsertVectors, [...key, model, seqs, vectors.map(toArrayLiteral), vectors.map(norm)]);
    });
  }

  /** Messages of a conversation without a vector of `model`, oldest first. */
  async listUnembeddedMessages(scope: Scope, model: string, limit: number): Promise<Message[]> {
    const rows = (await this.#pool.query<MessageRow>(this.#sql.selectUnembedded, [...scopeKey(scope), model, checkCount('limit', limit)])).rows;
    return rows.map(toMessage);
  }

  /** Deletes a tenant's (or one user's) vectors of every model but `exceptModel`; returns how many. */
  async deleteEmbeddings(filter: { tenantId: string; userId?: string; exceptModel?: string }): Promise<number> {
    const result = await this.#pool.query(this.#sql.deleteVectors, [filter.tenantId, filter.userId ?? null, filter.exceptModel ?? null]);
    return result.rowCount ?? 0;
  }

  /** BM25 over the user's messages that pass the filters (the corpus), best first, ties newest first. */
  async searchKeyword(user: UserScope, terms: readonly string[], options: SearchOptions): Promise<SearchHit[]> {
    const k = checkK(options.k);
    // Letter and digit runs only: they are safe operands of a to_tsquery OR query.
    const words = terms.flatMap((term) => term.match(/[\p{L}\p{N}]+/gu) ?? []);
    if (words.length === 0) return [];
    const filter = searchFilters(options, 5);
    if (filter === undefined) return [];
    const t = this.#tables;
    // Document length is the number of distinct lexemes (a tsvector's length), for the document and for
    // the corpus average alike; term frequency is the number of positions of the lexeme in the document.
    const query = `WITH corpus AS (
        SELECT m.conversation_id, m.seq, m.created_at, m.search_vector FROM ${t.messages} m WHERE m.tenant_id = $1 AND m.user_id = $2 ${filter.clause}
      ), totals AS (
        SELECT count(*)::float8 AS documents, coalesce(avg(length(search_vector)), 0)::float8 AS average_length FROM corpus
      ), matches AS (
        SELECT c.conversation_id, c.seq, c.created_at, length(c.search_vector)::float8 AS length, v.lexeme,
          greatest(cardinality(v.positions), 1)::float8 AS frequency
        FROM corpus c CROSS JOIN LATERAL unnest(c.search_vector) AS v (lexeme, positions, weights)
        WHERE c.search_vector @@ to_tsquery('english', $3) AND v.lexeme = ANY (tsvector_to_array(to_tsvector('english', $4)))
      ), frequencies AS (
        SELECT lexeme, count(*)::float8 AS documents FROM matches GROUP BY lexeme
      ), scored AS (
        SELECT m.conversation_id, m.seq, m.created_at,
          sum(ln(1 + (t.documents - f.documents + 0.5) / (f.documents + 0.5)) * m.frequency * ${k1 + 1}
            / (m.frequency + ${k1} * (1 - ${b} + ${b} * m.length / greatest(t.average_length, 1)))) AS score
        FROM matches m JOIN frequencies f USING (lexeme) CROSS JOIN totals t
        GROUP BY m.conversation_id, m.seq, m.created_at
        ORDER BY score DESC, m.created_at DESC, m.seq DESC LIMIT $5
      )
      SELECT ${prefixedColumns}, s.conversation_id, s.score FROM scored s
      JOIN ${t.messages} m ON m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = s.conversation_id AND m.seq = s.seq
      ORDER BY s.score DESC, s.created_at DESC, s.seq DESC`;
    const parameters = [user.tenantId, user.userId, words.join(' | '), words.join(' '), k, ...filter.parameters];
    return (await this.#pool.query<HitRow>(query, parameters)).rows.map(toHit);
  }

  /** Cosine nearest neighbours among the user's vectors of `model`, best first; `[]` for a model never stored. */
  async searchVector(user: UserScope, model: string, vector: Float32Array, options: SearchOptions): Promise<SearchHit[]> {
    const k = checkK(options.k);
    const stored = (await this.#pool.query<{ dimensions: unknown }>(this.#sql.modelDimensions, [user.tenantId, model])).rows[0];
    if (stored === undefined) return [];
    checkVector(model, vector, Number(stored.dimensions));
    const filter = searchFilters(options, 6);
    if (filter === undefined) return [];
    const t = this.#tables;
    const query = `SELECT ${prefixedColumns}, m.conversation_id,
        coalesce((SELECT sum(x::float8 * y::float8) FROM unnest(v.vector, $4::real[]) AS p (x, y)) / nullif(v.norm * $5, 0), 0) AS score
      FROM ${t.messageVectors} v
      JOIN ${t.messages} m ON m.tenant_id = v.tenant_id AND m.user_id = v.user_id AND m.conversation_id = v.conversation_id AND m.seq = v.seq
      WHERE v.tenant_id = $1 AND v.user_id = $2 AND v.model = $3 ${filter.clause}
      ORDER BY score DESC, m.created_at DESC, m.seq DESC LIMIT $6`;
    const parameters = [user.tenantId, user.userId, model, toArrayLiteral(vector), norm(vector), k, ...filter.parameters];
    return (await this.#pool.query<HitRow>(query, parameters)).rows.map(toHit);
  }
}

// The WHERE conditions of a search's filters on messages `m`, numbered after the query's own parameters;
// `undefined` when the filters admit nothing (an empty conversation list).
function searchFilters(options: SearchOptions, lastIndex: number): { clause: string; parameters: unknown[] } | undefined {
  const conditions: string[] = [];
  const parameters: unknown[] = [];
  const next = (value: unknown) => {
    parameters.push(value);
    return `$${lastIndex + parameters.length}`;
  };
  if (options.conversationIds !== undefined) {
    if (options.conversationIds.length === 0) return undefined;
    conditions.push(`m.conversation_id = ANY(${next([...options.conversationIds])}::text[])`);
  }
  if (options.since !== undefined) conditions.push(`m.created_at >= ${next(checkTime('since', options.since))}`);
  if (options.until !== undefined) conditions.push(`m.created_at < ${next(checkTime('until', options.until))}`);
  return { clause: conditions.map((condition) => `AND ${condition}`).join(' '), parameters };
}

function checkK(k: number): number {
  if (!Number.isInteger(k) || k < 1 || k > maxSearchK) {
    throw new MemoryError('invalid_input', `k must be an integer from 1 to ${maxSearchK}`, { details: { field: 'k' } });
  }
  return k;
}

function checkVector(model: string, vector: Float32Array, dimensions: number): void {
  if (vector.length !== dimensions) throw dimensionMismatch(model, dimensions, vector.length);
  if (!vector.every(Number.isFinite)) throw new MemoryError('invalid_input', `a vector of ${model} holds a value that is not a finite number`, { details: { model } });
}

function dimensionMismatch(model: string, expected: number, actual: number): MemoryError {
  return new MemoryError('invalid_input', `model ${model} has ${expected}-dimensional vectors, got ${actual}`, { details: { model } });
}

// A float4 array literal: every float32 prints as a decimal that real parses back to the same float32.
function toArrayLiteral(vector: Float32Array): string {
  return `{${Array.from(vector).join(',')}}`;
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (const value of vector) sum += value * value;
  return Math.sqrt(sum);
}

function toHit(row: HitRow): SearchHit {
  return { conversationId: row.conversation_id, message: toMessage(row), score: Number(row.score) };
}

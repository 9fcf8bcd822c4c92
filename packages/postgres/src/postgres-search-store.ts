import { MemoryError } from '@mnemo/core';
import type { Message, Scope, UserScope } from '@mnemo/core';
import {
  embeddingCounts,
  messageColumns,
  type EmbeddingCount,
  type MessageEmbedding,
  type MessageRow,
  type SearchHit,
  type SearchOptions,
} from '@mnemo/core/store-kit';
import type { PostgresClient, PostgresPool, PostgresQueryable } from './postgres-driver.js';
import { inConversation, toMessage } from './postgres-message-store.js';
import { searchKeywordPruned } from './postgres-pruned-keyword-search.js';
import { PostgresKeywordIndex } from './postgres-keyword-index.js';
import { keywordQueryWords } from './postgres-keyword-search.js';
import { PostgresPgvectorSearch } from './postgres-pgvector-search.js';
import {
  checkK,
  checkVector,
  dimensionMismatch,
  newerThan,
  prefixedMessageColumns,
  searchFilters,
  toHit,
  type HitRow,
} from './postgres-search-filters.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';
import { checkCount, scopeKey } from './postgres-values.js';
import { findVectorExtension, PostgresVectorTables } from './postgres-vector-tables.js';

/**
 * Messages of a conversation ($1–$3) without a `real[]` vector of model $4, oldest first, at most $5; with
 * `newest`, among its newest $6 only (bounded on both sides, so the planner cannot hash every vector).
 */
function unembeddedArray(t: PostgresTables, newest: boolean): string {
  const among = (column: string) => (newest ? `AND ${newerThan(t, column, 6)}` : '');
  return `SELECT ${prefixedMessageColumns} FROM ${t.messages} m WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = $3 ${among('m.seq')}
      AND NOT EXISTS (SELECT 1 FROM ${t.messageVectors} v WHERE v.tenant_id = m.tenant_id AND v.user_id = m.user_id
        AND v.conversation_id = m.conversation_id AND v.seq = m.seq AND v.model = $4 ${among('v.seq')})
      ORDER BY m.seq LIMIT $5`;
}

function statements(t: PostgresTables) {
  return {
    // Inserted on first use; afterwards the stored dimensions are what every vector of the model must have.
    insertModel: `INSERT INTO ${t.embeddingModels} (tenant_id, model, dimensions) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING dimensions`,
    modelDimensions: `SELECT dimensions FROM ${t.embeddingModels} WHERE tenant_id = $1 AND model = $2`,
    // KEY SHARE holds the messages until commit, so an erase cannot remove them under the new vectors.
    lockMessages: `SELECT seq FROM ${t.messages} WHERE ${inConversation} AND seq = ANY($4::bigint[]) FOR KEY SHARE`,
    upsertArrayVectors: `INSERT INTO ${t.messageVectors} (tenant_id, user_id, conversation_id, seq, model, vector, norm)
      SELECT $1, $2, $3, v.seq, $4, v.vector::real[], v.norm FROM unnest($5::bigint[], $6::text[], $7::float8[]) AS v (seq, vector, norm)
      ON CONFLICT (tenant_id, user_id, conversation_id, seq, model) DO UPDATE SET vector = excluded.vector, norm = excluded.norm`,
    selectUnembeddedArray: unembeddedArray(t, false),
    selectUnembeddedNewestArray: unembeddedArray(t, true),
    selectMessages: `SELECT ${messageColumns} FROM ${t.messages} WHERE ${inConversation} ORDER BY seq LIMIT $4`,
    selectNewestMessages: `SELECT ${messageColumns} FROM ${t.messages} WHERE ${inConversation} AND ${newerThan(t, 'seq', 5)} ORDER BY seq LIMIT $4`,
    deleteArrayVectors: `DELETE FROM ${t.messageVectors} WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2) AND ($3::text[] IS NULL OR model <> ALL($3))`,
    countArrayVectors: `SELECT model, count(*)::float8 AS vectors FROM ${t.messageVectors} WHERE $1::text IS NULL OR tenant_id = $1 GROUP BY model`,
  };
}

/** Where vectors live: pgvector tables when the extension is installed (and allowed), `real[]` rows otherwise. */
type VectorBackend =
  | { readonly kind: 'pgvector'; readonly tables: PostgresVectorTables; readonly search: PostgresPgvectorSearch }
  | { readonly kind: 'array' };

/**
 * Keyword and vector search over one user's messages. Keyword: BM25 over the candidates the GIN index
 * `messages_search` finds (see `keywordSearchStatement`). Vectors: with pgvector, one table per (model,
 * dimensions) under an HNSW cosine index, searched with iterative scans so tenant, user, conversation and
 * time filters still yield `k` hits; without pgvector, `real[]` rows compared by cosine in SQL (a scan of
 * the user's vectors). `embedding_models` pins each model's dimensions per tenant in both cases.
 */
export class PostgresSearchStore {
  readonly #pool: PostgresPool;
  readonly #tables: PostgresTables;
  readonly #sql: ReturnType<typeof statements>;
  readonly #usePgvector: boolean;
  readonly #keywords: PostgresKeywordIndex;
  #backend: Promise<VectorBackend> | undefined;

  /** `usePgvector: false` keeps vectors in `real[]` rows even where pgvector is installed (every replica of a store must agree). */
  constructor(pool: PostgresPool, tables: PostgresTables, options: { readonly usePgvector?: boolean } = {}) {
    this.#pool = pool;
    this.#tables = tables;
    this.#sql = statements(tables);
    this.#usePgvector = options.usePgvector ?? true;
    this.#keywords = new PostgresKeywordIndex(pool, tables);
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
    const vectors = [...bySeq.values()];
    const key = scopeKey(scope);
    const backend = await this.#vectorBackend();
    // A new model's table is created (DDL, under the migration lock) before the write's transaction, and
    // only for the dimensions the tenant's model has or will have.
    const known = await this.#modelDimensions(scope.tenantId, model);
    if (known !== undefined && known !== dimensions) throw dimensionMismatch(model, known, dimensions);
    const table = backend.kind === 'pgvector' ? await backend.tables.ensure(model, dimensions) : undefined;
    await runInTransaction(this.#pool, async (client) => {
      const stored = await this.#registerModel(client, scope.tenantId, model, dimensions);
      if (stored !== dimensions) throw dimensionMismatch(model, stored, dimensions);
      const found = new Set(
        (await client.query<{ seq: unknown }>(this.#sql.lockMessages, [...key, seqs])).rows.map((row) =>
          Number(row.seq),
        ),
      );
      const missing = seqs.find((seq) => !found.has(seq));
      if (missing !== undefined) {
        throw new MemoryError(
          'not_found',
          `message ${missing} of conversation ${scope.conversationId} does not exist`,
          {
            details: { seq: missing },
          },
        );
      }
      if (backend.kind === 'pgvector') await backend.search.upsert(client, scope, table!, seqs, vectors);
      else
        await client.query(this.#sql.upsertArrayVectors, [
          ...key,
          model,
          seqs,
          vectors.map(toArrayLiteral),
          vectors.map(norm),
        ]);
    });
  }

  /** Messages of a conversation without a vector of `model`, oldest first. */
  listUnembeddedMessages(scope: Scope, model: string, limit: number): Promise<Message[]> {
    return this.#unembedded(scope, model, undefined, limit);
  }

  /** Of a conversation's newest `among` messages, those without a vector of `model`, oldest first. */
  listUnembeddedNewest(scope: Scope, model: string, among: number, limit: number): Promise<Message[]> {
    checkCount('among', among);
    return this.#unembedded(scope, model, among, limit);
  }

  async #unembedded(scope: Scope, model: string, among: number | undefined, limit: number): Promise<Message[]> {
    checkCount('limit', limit);
    const newest = among === undefined ? [] : [among];
    const backend = await this.#vectorBackend();
    if (backend.kind === 'array') {
      const sql = among === undefined ? this.#sql.selectUnembeddedArray : this.#sql.selectUnembeddedNewestArray;
      return (await this.#pool.query<MessageRow>(sql, [...scopeKey(scope), model, limit, ...newest])).rows.map(
        toMessage,
      );
    }
    const dimensions = await this.#modelDimensions(scope.tenantId, model);
    const table = dimensions === undefined ? undefined : await backend.tables.find(model, dimensions);
    if (table === undefined) {
      const sql = among === undefined ? this.#sql.selectMessages : this.#sql.selectNewestMessages;
      return (await this.#pool.query<MessageRow>(sql, [...scopeKey(scope), limit, ...newest])).rows.map(toMessage);
    }
    return backend.search.listUnembedded(scope, table, limit, among);
  }

  /** Deletes a tenant's (or one user's) vectors of every model but those of `exceptModels`; returns how many. */
  async deleteEmbeddings(filter: {
    tenantId: string;
    userId?: string;
    exceptModels?: readonly string[];
  }): Promise<number> {
    const result = await this.#pool.query(this.#sql.deleteArrayVectors, [
      filter.tenantId,
      filter.userId ?? null,
      filter.exceptModels === undefined ? null : [...filter.exceptModels],
    ]);
    let deleted = result.rowCount ?? 0;
    const backend = await this.#vectorBackend();
    if (backend.kind === 'pgvector') {
      for (const table of await backend.tables.list()) {
        if (filter.exceptModels?.includes(table.model) !== true)
          deleted += await backend.search.delete(table, filter.tenantId, filter.userId);
      }
    }
    return deleted;
  }

  /** How many vectors each model has, in a tenant or the whole store (the `real[]` rows and every pgvector table). */
  async countEmbeddings(filter: { tenantId?: string }): Promise<EmbeddingCount[]> {
    const counts: EmbeddingCount[] = (
      await this.#pool.query<EmbeddingCount>(this.#sql.countArrayVectors, [filter.tenantId ?? null])
    ).rows;
    const backend = await this.#vectorBackend();
    if (backend.kind === 'pgvector') {
      for (const table of await backend.tables.list())
        counts.push({ model: table.model, vectors: await backend.search.count(table, filter.tenantId) });
    }
    return embeddingCounts(counts);
  }

  /** BM25 over the user's messages that match any term and pass the filters, best first, ties newest first. */
  /**
   * Keyword search: BM25 of the query's lexemes. Without filters, ranked in this process's copy of the
   * user's lexemes (`PostgresKeywordIndex`) once it is loaded, by the pruned statement until then; with
   * conversation or time filters, by the unpruned statement. All three give the same hits and scores.
   */
  async searchKeyword(user: UserScope, terms: readonly string[], options: SearchOptions): Promise<SearchHit[]> {
    if (options.conversationIds !== undefined || options.since !== undefined || options.until !== undefined)
      return searchKeywordPruned(this.#pool, this.#tables, user, terms, options);
    const k = checkK(options.k);
    const words = keywordQueryWords(terms);
    if (words.length === 0) return [];
    return (
      (await this.#keywords.search(user, words.join(' '), k)) ??
      searchKeywordPruned(this.#pool, this.#tables, user, terms, options)
    );
  }

  /** Loads the user's keyword copy now, instead of in the background after their first search. */
  warmKeywordIndex(user: UserScope): Promise<void> {
    return this.#keywords.warm(user);
  }

  /** Stops the background loads of keyword copies. */
  close(): Promise<void> {
    return this.#keywords.close();
  }

  /** Cosine nearest neighbours among the user's vectors of `model`, best first; `[]` for a model never stored. */
  async searchVector(
    user: UserScope,
    model: string,
    vector: Float32Array,
    options: SearchOptions,
  ): Promise<SearchHit[]> {
    const k = checkK(options.k);
    const dimensions = await this.#modelDimensions(user.tenantId, model);
    if (dimensions === undefined) return [];
    checkVector(model, vector, dimensions);
    const backend = await this.#vectorBackend();
    if (backend.kind === 'array') return this.#searchArrayVectors(user, model, vector, k, options);
    const table = await backend.tables.find(model, dimensions);
    return table === undefined ? [] : backend.search.search(user, table, vector, k, options);
  }

  async #modelDimensions(
    tenantId: string,
    model: string,
    queryable: PostgresQueryable = this.#pool,
  ): Promise<number | undefined> {
    const row = (await queryable.query<{ dimensions: unknown }>(this.#sql.modelDimensions, [tenantId, model])).rows[0];
    return row === undefined ? undefined : Number(row.dimensions);
  }

  // The model's dimensions for the tenant, recorded now when they are not yet. Not one INSERT … ON CONFLICT
  // with a SELECT beside it: when two transactions register a model at once, the second one's INSERT waits
  // for the first and then does nothing, and a SELECT in the same statement still sees the snapshot from
  // before the first committed (no row at all). A SELECT in a statement of its own sees the committed row.
  async #registerModel(client: PostgresClient, tenantId: string, model: string, dimensions: number): Promise<number> {
    const known = await this.#modelDimensions(tenantId, model, client);
    if (known !== undefined) return known;
    const inserted = (await client.query<{ dimensions: unknown }>(this.#sql.insertModel, [tenantId, model, dimensions]))
      .rows[0];
    if (inserted !== undefined) return Number(inserted.dimensions);
    const raced = await this.#modelDimensions(tenantId, model, client);
    if (raced === undefined)
      throw new MemoryError('unavailable', `model ${model} was registered and removed concurrently; retry`, {
        details: { retryable: true },
      });
    return raced;
  }

  // Looked up once per store: the extension is database-wide and is not expected to come or go while a
  // store is open (createPostgresStore moves `real[]` vectors into pgvector tables when it finds it).
  #vectorBackend(): Promise<VectorBackend> {
    if (this.#backend !== undefined) return this.#backend;
    const lookup = (async (): Promise<VectorBackend> => {
      const extensionSchema = this.#usePgvector ? await findVectorExtension(this.#pool) : undefined;
      if (extensionSchema === undefined) return { kind: 'array' };
      const tables = new PostgresVectorTables(this.#pool, this.#tables, extensionSchema);
      return { kind: 'pgvector', tables, search: new PostgresPgvectorSearch(this.#pool, this.#tables, tables.names) };
    })();
    // A failed lookup (the server was unreachable) is retried by the next call instead of being cached.
    lookup.catch(() => {
      if (this.#backend === lookup) this.#backend = undefined;
    });
    this.#backend = lookup;
    return lookup;
  }

  async #searchArrayVectors(
    user: UserScope,
    model: string,
    vector: Float32Array,
    k: number,
    options: SearchOptions,
  ): Promise<SearchHit[]> {
    const filter = searchFilters(options, 6, 'm');
    if (filter === undefined) return [];
    const t = this.#tables;
    const query = `SELECT ${prefixedMessageColumns}, m.conversation_id,
        coalesce((SELECT sum(x::float8 * y::float8) FROM unnest(v.vector, $4::real[]) AS p (x, y)) / nullif(v.norm * $5, 0), 0) AS score
      FROM ${t.messageVectors} v
      JOIN ${t.messages} m ON m.tenant_id = v.tenant_id AND m.user_id = v.user_id AND m.conversation_id = v.conversation_id AND m.seq = v.seq
      WHERE v.tenant_id = $1 AND v.user_id = $2 AND v.model = $3 ${filter.clause}
      ORDER BY score DESC, m.created_at DESC, m.seq DESC LIMIT $6`;
    const parameters = [
      user.tenantId,
      user.userId,
      model,
      toArrayLiteral(vector),
      norm(vector),
      k,
      ...filter.parameters,
    ];
    return (await this.#pool.query<HitRow>(query, parameters)).rows.map(toHit);
  }
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

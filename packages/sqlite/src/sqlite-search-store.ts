import { MemoryError } from '@mnemo/core';
import { cosineSimilarity } from '@mnemo/core/internals';
import type { Message, Scope, UserScope } from '@mnemo/core';
import {
  checkCount,
  embeddingCounts,
  type EmbeddingCount,
  type MessageEmbedding,
  type SearchHit,
  type SearchOptions,
} from '@mnemo/core/store-kit';
import type { SqliteDatabase } from './sqlite-driver.js';
import {
  binaryCandidates,
  codeWords,
  messageColumns,
  signCode,
  type CodeRow,
  type CopySource,
  type MessageRow,
  type ScanFilter,
} from '@mnemo/core/store-kit';
import { toMessage } from './sqlite-message-store.js';
import { scopeKey, toEpochMs } from './sqlite-values.js';
import { createStatementCache, type SqliteStatementCache } from './sqlite-statement-cache.js';
import { VectorCodeIndex, type CodeWatermark } from './sqlite-vector-code-index.js';
import { KeywordIndex, keywordQuery, keywordRow } from './sqlite-keyword-index.js';
import { watermarkSource, type Watermark } from './sqlite-user-copies.js';
import { blobVector, vectorBlob } from './sqlite-vector-codes.js';

interface ModelRow {
  readonly id: number;
  readonly dimensions: number;
}

type HitRow = MessageRow & { readonly conversation_id: string; readonly score: number };

const maxSearchK = 1000;
/** A user's code rows after an id, in id order (parameters: tenant, user, model id, the id, the limit or −1). */
const codeRowsSql = `SELECT id, message_rowid, conversation_id, created_at, code FROM message_vectors
  WHERE tenant_id = ? AND user_id = ? AND model_id = ? AND id > ? ORDER BY id LIMIT ?`;
/** A user's messages after a rowid, in rowid order (parameters: tenant, user, the rowid, the limit or −1). */
const messageRowsSql = `SELECT rowid, conversation_id, created_at, content FROM messages
  WHERE tenant_id = ? AND user_id = ? AND rowid > ? ORDER BY rowid LIMIT ?`;
const prefixedColumns = messageColumns
  .split(', ')
  .map((column) => `m.${column}`)
  .join(', ');

/**
 * Keyword search on each user's words indexed in memory (`KeywordIndex`: BM25 over the user's messages,
 * exact top k) and vector search on `message_vectors`: the user's sign codes scanned in memory by Hamming
 * distance (`VectorCodeIndex`), the candidates rescored by exact cosine distance on their stored floats
 * (see `sqlite-vector-codes.ts`). Both copies are kept in step with the file by a watermark per user, and
 * both only rank: every hit is read from the file with its owner checked.
 */
export class SqliteSearchStore {
  readonly #database: SqliteDatabase;
  readonly #statement: SqliteStatementCache;
  readonly #codes = new VectorCodeIndex();
  readonly #keywords = new KeywordIndex();

  constructor(database: SqliteDatabase) {
    this.#database = database;
    this.#statement = createStatementCache(database);
  }

  upsertEmbeddings(scope: Scope, model: string, embeddings: readonly MessageEmbedding[]): void {
    if (embeddings.length === 0) return;
    const dimensions = embeddings[0]!.vector.length;
    this.#database
      .transaction(() => {
        const modelId = this.#model(model, dimensions, true)!.id;
        for (const { seq, vector } of embeddings) {
          if (vector.length !== dimensions)
            throw new MemoryError(
              'invalid_input',
              `vectors of ${model} have ${dimensions} dimensions, got ${vector.length}`,
            );
          const row = this.#statement(
            `SELECT rowid, created_at FROM messages WHERE tenant_id = ? AND user_id = ? AND conversation_id = ? AND seq = ?`,
          ).get(...scopeKey(scope), seq) as { rowid: number; created_at: number } | undefined;
          if (row === undefined)
            throw new MemoryError('not_found', `message ${seq} of conversation ${scope.conversationId} does not exist`);
          // A new vector for a message is a delete and an insert, so other processes' copies of the codes
          // see a deletion and are read afresh (ids only grow).
          this.#statement('DELETE FROM message_vectors WHERE model_id = ? AND message_rowid = ?').run(
            modelId,
            row.rowid,
          );
          this.#statement(
            `INSERT INTO message_vectors (model_id, message_rowid, tenant_id, user_id, conversation_id, created_at, code, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          ).run(
            modelId,
            row.rowid,
            ...scopeKey(scope),
            row.created_at,
            vectorBlob(signCode(vector)),
            vectorBlob(vector),
          );
        }
      })
      .immediate();
  }

  listUnembeddedMessages(scope: Scope, model: string, limit: number): Message[] {
    return this.#unembedded(scope, model, undefined, limit);
  }

  listUnembeddedNewest(scope: Scope, model: string, among: number, limit: number): Message[] {
    checkCount('among', among);
    return this.#unembedded(scope, model, among, limit);
  }

  /** A conversation's messages with no vector of `model` (among its newest `among`, if given), oldest first. */
  #unembedded(scope: Scope, model: string, among: number | undefined, limit: number): Message[] {
    checkCount('limit', limit);
    const modelId =
      (this.#statement('SELECT id FROM embedding_models WHERE model = ?').get(model) as { id: number } | undefined)
        ?.id ?? -1;
    const newest =
      among === undefined
        ? ''
        : `AND m.seq > (SELECT coalesce(max(seq), 0) FROM messages WHERE tenant_id = m.tenant_id
             AND user_id = m.user_id AND conversation_id = m.conversation_id) - ?`;
    const rows = this.#statement(
      `SELECT ${prefixedColumns} FROM messages m WHERE m.tenant_id = ? AND m.user_id = ? AND m.conversation_id = ? ${newest}
       AND NOT EXISTS (SELECT 1 FROM message_vectors e WHERE e.model_id = ? AND e.message_rowid = m.rowid)
       ORDER BY m.seq LIMIT ?`,
    ).all(...scopeKey(scope), ...(among === undefined ? [] : [among]), modelId, limit) as MessageRow[];
    return rows.map(toMessage);
  }

  deleteEmbeddings(filter: { tenantId: string; userId?: string; exceptModels?: readonly string[] }): number {
    return this.#database
      .transaction(() => {
        const owned = filter.userId === undefined ? 'tenant_id = ?' : 'tenant_id = ? AND user_id = ?';
        const parameters = filter.userId === undefined ? [filter.tenantId] : [filter.tenantId, filter.userId];
        const kept = filter.exceptModels ?? [];
        const except =
          kept.length === 0
            ? ''
            : 'AND model_id NOT IN (SELECT id FROM embedding_models WHERE model IN (SELECT value FROM json_each(?)))';
        return this.#statement(`DELETE FROM message_vectors WHERE ${owned} ${except}`).run(
          ...parameters,
          ...(kept.length === 0 ? [] : [JSON.stringify(kept)]),
        ).changes;
      })
      .immediate();
  }

  countEmbeddings(filter: { tenantId?: string }): EmbeddingCount[] {
    const rows = this.#statement(
      `SELECT em.model AS model, v.vectors AS vectors
       FROM (SELECT model_id, count(*) AS vectors FROM message_vectors ${filter.tenantId === undefined ? '' : 'WHERE tenant_id = ?'} GROUP BY model_id) v
       JOIN embedding_models em ON em.id = v.model_id`,
    ).all(...(filter.tenantId === undefined ? [] : [filter.tenantId])) as EmbeddingCount[];
    return embeddingCounts(rows);
  }

  /** Removes the vectors of messages about to be deleted (`where` selects rows by their owner columns). */
  deleteVectorsOf(where: string, parameters: readonly unknown[]): void {
    this.#statement(`DELETE FROM message_vectors WHERE ${where}`).run(...parameters);
  }

  /**
   * Removes the deletion counts of the users being erased (`where` on their owner columns), after their
   * vectors and messages, so that no row names them; counts an erasure, which makes every process read its copies afresh.
   */
  forgetUsers(where: string, parameters: readonly unknown[]): void {
    this.#statement(`DELETE FROM vector_deletions WHERE ${where}`).run(...parameters);
    this.#statement(`DELETE FROM message_deletions WHERE ${where}`).run(...parameters);
    this.#statement('UPDATE vector_erasures SET erasures = erasures + 1 WHERE id = 1').run();
  }

  async searchKeyword(user: UserScope, terms: readonly string[], options: SearchOptions): Promise<SearchHit[]> {
    const k = checkK(options.k);
    const query = keywordQuery(terms);
    if (query.length === 0 || options.conversationIds?.length === 0) return [];
    const key = `${user.tenantId}\u001f${user.userId}`;
    const hits = await this.#keywords.search(key, this.#messageSource(user), query, k, scanFilter(options));
    // In the ranker's order: best score first, then the newest (time, then rowid).
    return this.#hits(
      user,
      hits.map(({ key, score }) => ({ rowid: key, score })),
    );
  }

  // Nearest codes by Hamming distance (filters applied in the scan), then the exact cosine distance of
  // each candidate's float vector, read with its owner checked; a user with at most that many vectors is
  // thus searched exactly. Ties go to the newer message (rowid grows with appends).
  async searchVector(
    user: UserScope,
    model: string,
    vector: Float32Array,
    options: SearchOptions,
  ): Promise<SearchHit[]> {
    const k = checkK(options.k);
    if (options.conversationIds !== undefined && options.conversationIds.length === 0) return [];
    const owner = this.#owner(user, model, vector.length);
    if (owner === undefined) return [];
    const [tenantId, userId, modelId] = owner;
    const words = codeWords(vector.length);
    const candidates = await this.#codes.nearest(
      [...owner, words].join('\u001f'),
      this.#codeSource(owner, words),
      signCode(vector),
      binaryCandidates(k),
      scanFilter(options),
    );
    const floats = this.#statement(
      `SELECT v.message_rowid AS rowid, v.vector FROM json_each(?) j CROSS JOIN message_vectors v ON v.model_id = ? AND v.message_rowid = j.value
       WHERE v.tenant_id = ? AND v.user_id = ?`,
    ).all(JSON.stringify(candidates), modelId, tenantId, userId) as { rowid: number; vector: Uint8Array }[];
    const scored = floats.map(({ rowid, vector: blob }) => ({
      rowid,
      distance: 1 - cosineSimilarity(blobVector(blob), vector),
    }));
    const nearest = scored.sort((a, b) => a.distance - b.distance || b.rowid - a.rowid).slice(0, k);
    return this.#hits(
      { tenantId, userId },
      nearest.map(({ rowid, distance }) => ({ rowid, score: 1 - distance })),
    );
  }

  // The user's messages as the keyword copy reads them.
  #messageSource(user: UserScope): CopySource<Watermark, Watermark, ReturnType<typeof keywordRow>> {
    const rows = this.#statement(messageRowsSql).raw(true);
    return watermarkSource(this.#database, {
      watermark: () => this.#messageWatermark(user),
      rowsAfter: (afterId, limit) =>
        rows.all(user.tenantId, user.userId, afterId, limit) as [number, string, number, string][],
      toRow: (row) => {
        const [rowid, conversationId, createdAt, content] = row as [number, string, number, string];
        return keywordRow(rowid, conversationId, createdAt, content);
      },
    });
  }

  // The user's codes of one model as the code copy reads them.
  #codeSource(
    owner: readonly [string, string, number],
    words: number,
  ): CopySource<CodeWatermark, CodeWatermark, CodeRow> {
    const rows = this.#statement(codeRowsSql).raw(true);
    return watermarkSource(this.#database, {
      watermark: () => ({ ...this.#watermark(owner), words }),
      rowsAfter: (afterId, limit) =>
        rows.all(...owner, afterId, limit) as [number, number, string, number, Uint8Array][],
      toRow: (row) => row.slice(1) as unknown as CodeRow,
    });
  }

  // The messages of ranked rowids, in their order, read in one statement with their owner checked (a row gone since is left out).
  #hits(user: UserScope, ranked: readonly { rowid: number; score: number }[]): SearchHit[] {
    if (ranked.length === 0) return [];
    const rows = this.#statement(
      `SELECT m.rowid, ${prefixedColumns}, m.conversation_id, 0 AS score FROM json_each(?) j CROSS JOIN messages m ON m.rowid = j.value WHERE m.tenant_id = ? AND m.user_id = ?`,
    ).all(JSON.stringify(ranked.map(({ rowid }) => rowid)), user.tenantId, user.userId) as (HitRow & {
      rowid: number;
    })[];
    const byRowid = new Map(rows.map((row) => [row.rowid, row]));
    return ranked.flatMap(({ rowid, score }) => {
      const row = byRowid.get(rowid);
      return row === undefined ? [] : [{ ...toHit(row), score }];
    });
  }

  // Where the user's messages stand in the file: the newest rowid, the user's deletions and all erasures counted so far.
  #messageWatermark(user: UserScope): Watermark {
    const lastId =
      (
        this.#statement('SELECT max(rowid) AS id FROM messages WHERE tenant_id = ? AND user_id = ?').get(
          user.tenantId,
          user.userId,
        ) as {
          id: number | null;
        }
      ).id ?? 0;
    const deletions =
      (
        this.#statement('SELECT deletions FROM message_deletions WHERE tenant_id = ? AND user_id = ?').get(
          user.tenantId,
          user.userId,
        ) as { deletions: number } | undefined
      )?.deletions ?? 0;
    return { lastId, deletions, erasures: this.#erasures() };
  }

  // The key of a user's vectors of a model (tenant, user, model id), or undefined for a model never stored.
  #owner(user: UserScope, model: string, dimensions: number): readonly [string, string, number] | undefined {
    const table = this.#model(model, dimensions, false);
    return table === undefined ? undefined : [user.tenantId, user.userId, table.id];
  }

  // Where the user's vectors stand in the file: the newest id, the user's deletions and all erasures counted so far.
  #watermark(owner: readonly [string, string, number]): Watermark {
    const lastId =
      (
        this.#statement(
          'SELECT max(id) AS id FROM message_vectors WHERE tenant_id = ? AND user_id = ? AND model_id = ?',
        ).get(...owner) as {
          id: number | null;
        }
      ).id ?? 0;
    const deletions =
      (
        this.#statement(
          'SELECT deletions FROM vector_deletions WHERE tenant_id = ? AND user_id = ? AND model_id = ?',
        ).get(...owner) as { deletions: number } | undefined
      )?.deletions ?? 0;
    return { lastId, deletions, erasures: this.#erasures() };
  }

  // Users erased so far in the file (any user's erasure makes every copy stale).
  #erasures(): number {
    return (this.#statement('SELECT erasures FROM vector_erasures WHERE id = 1').get() as { erasures: number })
      .erasures;
  }

  // The registry row of a model (created on first use with `create`); its dimensions must match.
  #model(model: string, dimensions: number, create: boolean): { id: number } | undefined {
    let row = this.#statement('SELECT id, dimensions FROM embedding_models WHERE model = ?').get(model) as
      ModelRow | undefined;
    if (row === undefined) {
      if (!create) return undefined;
      const id = Number(
        this.#statement('INSERT INTO embedding_models (model, dimensions) VALUES (?, ?)').run(model, dimensions)
          .lastInsertRowid,
      );
      row = { id, dimensions };
    }
    if (row.dimensions !== dimensions) {
      throw new MemoryError(
        'invalid_input',
        `model ${model} has ${row.dimensions}-dimensional vectors, got ${dimensions}`,
        {
          details: { model },
        },
      );
    }
    return { id: row.id };
  }
}

// The scan's form of a search's filters (times in epoch ms).
function scanFilter(options: SearchOptions): ScanFilter {
  return {
    ...(options.conversationIds === undefined ? {} : { conversationIds: options.conversationIds }),
    ...(options.since === undefined ? {} : { since: toEpochMs('since', options.since) }),
    ...(options.until === undefined ? {} : { until: toEpochMs('until', options.until) }),
  };
}

function checkK(k: number): number {
  if (!Number.isInteger(k) || k < 1 || k > maxSearchK) {
    throw new MemoryError('invalid_input', `k must be an integer from 1 to ${maxSearchK}`, { details: { field: 'k' } });
  }
  return k;
}

function toHit(row: HitRow): SearchHit {
  return { conversationId: row.conversation_id, message: toMessage(row), score: row.score };
}

import { MemoryError } from '@mnemo/core';
import type { Message, Scope, UserScope } from '@mnemo/core';
import type { MessageEmbedding, SearchHit, SearchOptions } from '@mnemo/core/store-kit';
import type { SqliteDatabase } from './sqlite-driver.js';
import { messageColumns, type MessageRow } from '@mnemo/core/store-kit';
import { toMessage } from './sqlite-message-store.js';
import { scopeKey, toEpochMs } from './sqlite-values.js';
import { createStatementCache, type SqliteStatementCache } from './sqlite-statement-cache.js';
import { binaryCandidates, createVectorCodesTableSql, quantizeSql, vectorBlob, vectorCodesTable } from './sqlite-vector-codes.js';

interface ModelRow {
  readonly id: number;
  readonly dimensions: number;
}

type HitRow = MessageRow & { readonly conversation_id: string; readonly score: number };

const maxSearchK = 1000;
const prefixedColumns = messageColumns
  .split(', ')
  .map((column) => `m.${column}`)
  .join(', ');

/** The FTS `owner` token of a user: the same text the index triggers compute in SQL. */
export function ownerToken(user: UserScope): string {
  return `o${Buffer.from(`${user.tenantId}\u001f${user.userId}`, 'utf8').toString('hex').toUpperCase()}`;
}

/**
 * Keyword search on FTS5 (BM25, porter stemming) and vector search on sqlite-vec (one `vec0` table per
 * model, partitioned by tenant and user, with conversation and time as filterable metadata): a
 * binary-quantized prefilter rescored by exact cosine distance (see `sqlite-vector-codes.ts`).
 */
export class SqliteSearchStore {
  readonly #database: SqliteDatabase;
  readonly #statement: SqliteStatementCache;

  constructor(database: SqliteDatabase) {
    this.#database = database;
    this.#statement = createStatementCache(database);
  }

  upsertEmbeddings(scope: Scope, model: string, embeddings: readonly MessageEmbedding[]): void {
    if (embeddings.length === 0) return;
    const dimensions = embeddings[0]!.vector.length;
    this.#database
      .transaction(() => {
        const table = this.#vectorTable(model, dimensions, true)!;
        for (const { seq, vector } of embeddings) {
          if (vector.length !== dimensions) throw new MemoryError('invalid_input', `vectors of ${model} have ${dimensions} dimensions, got ${vector.length}`);
          const row = this.#statement(`SELECT rowid, created_at FROM messages WHERE tenant_id = ? AND user_id = ? AND conversation_id = ? AND seq = ?`).get(
            ...scopeKey(scope),
            seq,
          ) as { rowid: number; created_at: number } | undefined;
          if (row === undefined) throw new MemoryError('not_found', `message ${seq} of conversation ${scope.conversationId} does not exist`);
          this.#statement(`DELETE FROM ${table.name} WHERE rowid = ?`).run(BigInt(row.rowid));
          const blob = vectorBlob(vector);
          this.#statement(
            `INSERT INTO ${table.name} (rowid, tenant_id, user_id, conversation_id, created_at, embedding, vector) VALUES (?, ?, ?, ?, ?, ${quantizeSql('?', dimensions)}, ?)`,
          ).run(BigInt(row.rowid), ...scopeKey(scope), BigInt(row.created_at), blob, blob);
          this.#statement(
            `INSERT OR IGNORE INTO message_embeddings (model_id, message_rowid, tenant_id, user_id, conversation_id) VALUES (?, ?, ?, ?, ?)`,
          ).run(table.id, row.rowid, ...scopeKey(scope));
        }
      })
      .immediate();
  }

  listUnembeddedMessages(scope: Scope, model: string, limit: number): Message[] {
    const modelId = (this.#statement('SELECT id FROM embedding_models WHERE model = ?').get(model) as { id: number } | undefined)?.id ?? -1;
    const rows = this.#statement(
      `SELECT ${prefixedColumns} FROM messages m WHERE m.tenant_id = ? AND m.user_id = ? AND m.conversation_id = ?
       AND NOT EXISTS (SELECT 1 FROM message_embeddings e WHERE e.model_id = ? AND e.message_rowid = m.rowid)
       ORDER BY m.seq LIMIT ?`,
    ).all(...scopeKey(scope), modelId, limit) as MessageRow[];
    return rows.map(toMessage);
  }

  deleteEmbeddings(filter: { tenantId: string; userId?: string; exceptModel?: string }): number {
    return this.#database
      .transaction(() => {
        let deleted = 0;
        const models = this.#statement('SELECT id, model, dimensions FROM embedding_models').all() as (ModelRow & { model: string })[];
        for (const model of models) {
          if (model.model === filter.exceptModel) continue;
          const owned = filter.userId === undefined ? 'tenant_id = ?' : 'tenant_id = ? AND user_id = ?';
          const parameters = filter.userId === undefined ? [filter.tenantId] : [filter.tenantId, filter.userId];
          this.#statement(`DELETE FROM ${vectorCodesTable(model.id)} WHERE rowid IN (SELECT message_rowid FROM message_embeddings WHERE model_id = ? AND ${owned})`).run(
            model.id,
            ...parameters,
          );
          deleted += this.#statement(`DELETE FROM message_embeddings WHERE model_id = ? AND ${owned}`).run(model.id, ...parameters).changes;
        }
        return deleted;
      })
      .immediate();
  }

  /** Removes the vectors of messages about to be deleted (`where` selects message rowids by owner columns). */
  deleteVectorsOf(where: string, parameters: readonly unknown[]): void {
    const models = this.#statement('SELECT id FROM embedding_models').all() as { id: number }[];
    for (const { id } of models) {
      this.#statement(`DELETE FROM ${vectorCodesTable(id)} WHERE rowid IN (SELECT message_rowid FROM message_embeddings WHERE model_id = ? AND ${where})`).run(
        id,
        ...parameters,
      );
    }
    this.#statement(`DELETE FROM message_embeddings WHERE ${where}`).run(...parameters);
  }

  searchKeyword(user: UserScope, terms: readonly string[], options: SearchOptions): SearchHit[] {
    const k = checkK(options.k);
    const words = terms.map((term) => term.replace(/"/g, '')).filter((term) => term.length > 0);
    if (words.length === 0) return [];
    const match = `owner : "${ownerToken(user)}" AND (${words.map((word) => `"${word}"`).join(' OR ')})`;
    const { clause, parameters } = filters(options);
    // bm25() is lower-is-better; the owner column gets weight 0 so it only filters, never ranks. CROSS JOIN
    // pins the join order: FTS first (one MATCH), then messages by rowid; the planner otherwise starts from
    // the user's messages and re-runs the MATCH per row, which took ~40 s a query at 100k messages.
    if (clause === '') {
      // Top-k inside FTS first: only the k best rows are joined to messages and read, instead of every
      // message that matches any word (most of a long chat for a common word). The owner token already
      // restricts the match to the user; ties at the cut go to the newest row (rowid grows with appends).
      const top = this.#statement(
        `SELECT ${prefixedColumns}, m.conversation_id, f.score AS score
         FROM (SELECT rowid, -bm25(messages_fts, 0.0, 1.0) AS score FROM messages_fts WHERE messages_fts MATCH ? ORDER BY score DESC, rowid DESC LIMIT ?) f
         CROSS JOIN messages m ON m.rowid = f.rowid
         WHERE m.tenant_id = ? AND m.user_id = ?
         ORDER BY score DESC, m.created_at DESC, m.seq DESC`,
      ).all(match, k, user.tenantId, user.userId) as HitRow[];
      return top.map(toHit);
    }
    const rows = this.#statement(
      `SELECT ${prefixedColumns}, m.conversation_id, -bm25(messages_fts, 0.0, 1.0) AS score
       FROM messages_fts CROSS JOIN messages m ON m.rowid = messages_fts.rowid
       WHERE messages_fts MATCH ? AND m.tenant_id = ? AND m.user_id = ? ${clause}
       ORDER BY score DESC, m.created_at DESC, m.seq DESC LIMIT ?`,
    ).all(match, user.tenantId, user.userId, ...parameters, k) as HitRow[];
    return rows.map(toHit);
  }

  searchVector(user: UserScope, model: string, vector: Float32Array, options: SearchOptions): SearchHit[] {
    const k = checkK(options.k);
    const table = this.#vectorTable(model, vector.length, false);
    if (table === undefined) return [];
    const conditions: string[] = [];
    const parameters: unknown[] = [];
    if (options.conversationIds !== undefined) {
      if (options.conversationIds.length === 0) return [];
      conditions.push(`conversation_id IN (${options.conversationIds.map(() => '?').join(', ')})`);
      parameters.push(...options.conversationIds);
    }
    if (options.since !== undefined) {
      conditions.push('created_at >= ?');
      parameters.push(BigInt(toEpochMs('since', options.since)));
    }
    if (options.until !== undefined) {
      conditions.push('created_at < ?');
      parameters.push(BigInt(toEpochMs('until', options.until)));
    }
    // Nearest codes by Hamming distance (inside the user's partition, filters applied in the scan), then
    // the exact cosine distance of each candidate's float vector; a user with at most that many vectors
    // is thus searched exactly. Ties go to the newer message (rowid grows with appends).
    const blob = vectorBlob(vector);
    const candidates = this.#statement(
      `SELECT rowid, vec_distance_cosine(vector, ?) AS distance FROM ${table.name}
       WHERE embedding MATCH ${quantizeSql('?', vector.length)} AND k = ? AND tenant_id = ? AND user_id = ?
       ${conditions.map((condition) => `AND ${condition}`).join(' ')}`,
    ).all(blob, blob, binaryCandidates(k), user.tenantId, user.userId, ...parameters) as { rowid: number; distance: number }[];
    const nearest = candidates.sort((a, b) => a.distance - b.distance || b.rowid - a.rowid).slice(0, k);
    const byRowid = this.#statement(`SELECT ${messageColumns}, conversation_id, 0 AS score FROM messages WHERE rowid = ?`);
    return nearest.flatMap(({ rowid, distance }) => {
      const row = byRowid.get(rowid) as HitRow | undefined;
      return row === undefined ? [] : [{ ...toHit(row), score: 1 - distance }];
    });
  }

  // One vec0 table per model: rowid = the message's rowid, so a message has at most one vector per model.
  #vectorTable(model: string, dimensions: number, create: boolean): { id: number; name: string } | undefined {
    let row = this.#statement('SELECT id, dimensions FROM embedding_models WHERE model = ?').get(model) as ModelRow | undefined;
    if (row === undefined) {
      if (!create) return undefined;
      const id = Number(this.#statement('INSERT INTO embedding_models (model, dimensions) VALUES (?, ?)').run(model, dimensions).lastInsertRowid);
      this.#database.exec(createVectorCodesTableSql(id, dimensions));
      row = { id, dimensions };
    }
    if (row.dimensions !== dimensions) {
      throw new MemoryError('invalid_input', `model ${model} has ${row.dimensions}-dimensional vectors, got ${dimensions}`, { details: { model } });
    }
    return { id: row.id, name: vectorCodesTable(row.id) };
  }
}

function filters(options: SearchOptions): { clause: string; parameters: unknown[] } {
  const conditions: string[] = [];
  const parameters: unknown[] = [];
  if (options.conversationIds !== undefined) {
    conditions.push(options.conversationIds.length === 0 ? '0' : `m.conversation_id IN (${options.conversationIds.map(() => '?').join(', ')})`);
    parameters.push(...options.conversationIds);
  }
  if (options.since !== undefined) {
    conditions.push('m.created_at >= ?');
    parameters.push(toEpochMs('since', options.since));
  }
  if (options.until !== undefined) {
    conditions.push('m.created_at < ?');
    parameters.push(toEpochMs('until', options.until));
  }
  return { clause: conditions.map((condition) => `AND ${condition}`).join(' '), parameters };
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

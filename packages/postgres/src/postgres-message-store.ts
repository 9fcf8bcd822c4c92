import { MemoryError } from '@mnemo/core';
import type {
  RoleCounts,
  Conversation,
  EraseResult,
  Message,
  MessageRange,
  Metadata,
  NewMessage,
  Page,
  PageOptions,
  Scope,
  UsageEntry,
  UsageKind,
  UsageRecord,
  UsageTotals,
  UserScope,
} from '@mnemo/core';
import {
  checkConversationMetadata,
  checkStorableMessage,
  conversationFromRow,
  type ConversationFilter,
  type ConversationRow,
  decodeConversationCursor,
  decodePositionCursor,
  encodeConversationCursor,
  encodePositionCursor,
  idempotencyConflict,
  isSameMessage,
  messageColumns,
  messageFromRow,
  type MessageRow,
  resolvePageLimit,
  toRoleCounts,
  toUsageTotals,
} from '@mnemo/core/store-kit';
import type { PostgresClient, PostgresPool, PostgresQueryable } from './postgres-driver.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';
import { checkCount, checkTime, scopeKey, toInteger, toIsoTime } from './postgres-values.js';

/** Columns of a conversation as {@link toConversation} reads them. */
export const conversationColumns =
  'tenant_id, user_id, conversation_id, created_at, updated_at, message_count, total_tokens, summarized_through_seq, summarized_tokens, metadata, erased_messages';
/** The WHERE clause of one conversation, bound to `$1, $2, $3` ({@link scopeKey}). */
export const inConversation = 'tenant_id = $1 AND user_id = $2 AND conversation_id = $3';

// How often an append retries finding its conversation row when an erase removes it between the insert
// attempt and the lock; each retry means another transaction erased the conversation meanwhile.
const lockAttempts = 3;
// Seq bounds are bound as bigint: fractional and infinite bounds are rounded to the equivalent integer ones.
const seqLimit = Number.MAX_SAFE_INTEGER;

function statements(t: PostgresTables) {
  return {
    lockConversation: `SELECT ${conversationColumns} FROM ${t.conversations} WHERE ${inConversation} FOR UPDATE`,
    // A new conversation's row: the inserting transaction holds it (uncommitted) until it commits, so
    // concurrent first appends queue behind it exactly as they queue behind FOR UPDATE.
    insertConversation: `INSERT INTO ${t.conversations} (tenant_id, user_id, conversation_id, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $4) ON CONFLICT DO NOTHING RETURNING ${conversationColumns}`,
    selectByIdempotencyKeys: `SELECT ${messageColumns} FROM ${t.messages} WHERE ${inConversation} AND idempotency_key = ANY($4::text[])`,
    // One statement for the rows and the counters: unnest takes the whole batch as 11 arrays, whatever its size.
    // `search_length` sums the new rows' lexeme counts: keyword search reads its BM25 corpus statistics there.
    insertMessages: `WITH inserted AS (
        INSERT INTO ${t.messages} (tenant_id, user_id, conversation_id, ${messageColumns})
        SELECT $1, $2, $3, m.id, m.seq, m.role, m.content, m.name, m.tool_calls::json, m.tool_call_id, m.created_at, m.metadata::json, m.tokens, m.idempotency_key
        FROM unnest($4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::text[], $13::bigint[], $14::text[])
          AS m (id, seq, role, content, name, tool_calls, tool_call_id, created_at, metadata, tokens, idempotency_key)
        RETURNING length(search_vector) AS lexemes
      )
      UPDATE ${t.conversations} SET message_count = $15, total_tokens = $16, updated_at = $17,
        search_length = search_length + (SELECT coalesce(sum(lexemes), 0) FROM inserted)
      WHERE ${inConversation}`,
    selectRangeAsc: `SELECT ${messageColumns} FROM ${t.messages} WHERE ${inConversation} AND seq > $4 AND seq < $5 ORDER BY seq ASC LIMIT $6`,
    selectRangeDesc: `SELECT ${messageColumns} FROM ${t.messages} WHERE ${inConversation} AND seq > $4 AND seq < $5 ORDER BY seq DESC LIMIT $6`,
    selectConversation: `SELECT ${conversationColumns} FROM ${t.conversations} WHERE ${inConversation}`,
    updateConversationMetadata: `UPDATE ${t.conversations} SET metadata = $4::jsonb WHERE ${inConversation} RETURNING ${conversationColumns}`,
    // Served by the (tenant, user, conversation, seq) primary key: one range of it, grouped.
    countMessagesByRole: `SELECT role, count(*) AS count FROM ${t.messages} WHERE ${inConversation} GROUP BY role`,
    // Inserting through a SELECT of the conversation makes "exists?" and "insert" one atomic statement.
    insertUsage: `INSERT INTO ${t.usage} (tenant_id, user_id, conversation_id, kind, policy, sent_tokens, full_history_tokens, input_tokens, output_tokens, created_at)
      SELECT tenant_id, user_id, conversation_id, $4, $5, $6, $7, $8, $9, $10 FROM ${t.conversations} WHERE ${inConversation}`,
    selectUsageTotals: `SELECT count(*) FILTER (WHERE kind = 'context') AS requests, coalesce(sum(sent_tokens) FILTER (WHERE kind = 'context'), 0) AS sent_tokens,
      coalesce(sum(full_history_tokens) FILTER (WHERE kind = 'context'), 0) AS full_history_tokens, count(*) FILTER (WHERE kind = 'summarize') AS compactions,
      coalesce(sum(input_tokens) FILTER (WHERE kind = 'summarize'), 0) AS input_tokens, coalesce(sum(output_tokens) FILTER (WHERE kind = 'summarize'), 0) AS output_tokens
      FROM ${t.usage} WHERE ${inConversation}`,
    selectUsage: `SELECT position, kind, policy, sent_tokens, full_history_tokens, input_tokens, output_tokens, created_at FROM ${t.usage}
      WHERE ${inConversation} AND position > $4 ORDER BY position LIMIT $5`,
    lockUserConversations: `SELECT conversation_id FROM ${t.conversations} WHERE tenant_id = $1 AND user_id = $2 ORDER BY conversation_id FOR UPDATE`,
    deleteConversation: deletes(t, inConversation),
    deleteUser: deletes(t, 'tenant_id = $1 AND user_id = $2'),
  };
}

interface Deletes {
  readonly dependents: readonly string[];
  readonly messages: string;
  readonly conversations: string;
}

// Children first: the foreign keys refuse a message removed under its vectors, and a conversation row
// removed under its messages. Jobs are removed by key, not through the conversation: a job may be queued
// for a conversation without messages.
function deletes(t: PostgresTables, where: string): Deletes {
  return {
    dependents: [t.messageVectors, t.usage, t.summaries, t.jobs, t.cursors].map(
      (table) => `DELETE FROM ${table} WHERE ${where}`,
    ),
    messages: `DELETE FROM ${t.messages} WHERE ${where}`,
    conversations: `DELETE FROM ${t.conversations} WHERE ${where}`,
  };
}

/**
 * The SQL of conversations, messages and the usage ledger. Appends run in one transaction that holds the
 * conversation's row lock, so seqs stay gapless with any number of connections and processes appending.
 * Methods throw `MemoryError`s for bad input, conflicts and missing rows, and let driver errors through
 * for the caller to wrap.
 */
export class PostgresMessageStore {
  readonly #pool: PostgresPool;
  readonly #tables: PostgresTables;
  readonly #sql: ReturnType<typeof statements>;

  constructor(pool: PostgresPool, tables: PostgresTables) {
    this.#pool = pool;
    this.#tables = tables;
    this.#sql = statements(tables);
  }

  /** Appends in one transaction: idempotency is checked for the whole batch, under the lock, before any write. */
  async appendMessages(scope: Scope, messages: readonly NewMessage[]): Promise<Message[]> {
    if (messages.length === 0) return [];
    messages.forEach(checkStorableMessage);
    return runInTransaction(this.#pool, (client) => this.#appendLocked(client, scope, messages));
  }

  /** Messages of one conversation in the range, in seq order; `[]` for an unknown conversation. */
  async listMessages(scope: Scope, range: MessageRange = {}): Promise<Message[]> {
    const afterSeq = Math.floor(clampSeq('afterSeq', range.afterSeq ?? 0));
    const beforeSeq = Math.ceil(clampSeq('beforeSeq', range.beforeSeq ?? seqLimit));
    const limit = range.limit === undefined ? null : checkCount('limit', range.limit);
    const query = range.order === 'desc' ? this.#sql.selectRangeDesc : this.#sql.selectRangeAsc;
    const result = await this.#pool.query<MessageRow>(query, [...scopeKey(scope), afterSeq, beforeSeq, limit]);
    return result.rows.map(toMessage);
  }

  /** The conversation's row, or `undefined`. */
  async getConversation(scope: Scope): Promise<Conversation | undefined> {
    const result = await this.#pool.query<ConversationRow>(this.#sql.selectConversation, scopeKey(scope));
    const row = result.rows[0];
    return row === undefined ? undefined : toConversation(row);
  }

  /** One page of a tenant's conversations ordered by user id, then conversation id (byte order). */
  async listConversations(filter: ConversationFilter, page: PageOptions = {}): Promise<Page<Conversation>> {
    const limit = resolvePageLimit(page.limit);
    const after = page.cursor === undefined ? undefined : decodeConversationCursor(page.cursor);
    const parameters: unknown[] = [filter.tenantId];
    const conditions = ['tenant_id = $1'];
    if (filter.userId !== undefined) {
      parameters.push(filter.userId);
      conditions.push(`user_id = $${parameters.length}`);
    }
    if (filter.search !== undefined) {
      // strpos, not LIKE: the text is matched literally; lower() under COLLATE "C" folds ASCII only, as SQLite's does.
      parameters.push(filter.search);
      conditions.push(
        `(strpos(lower(user_id), lower($${parameters.length})) > 0 OR strpos(lower(conversation_id), lower($${parameters.length})) > 0)`,
      );
    }
    if (after !== undefined) {
      parameters.push(after.userId, after.conversationId);
      conditions.push(`(user_id, conversation_id) > ($${parameters.length - 1}, $${parameters.length})`);
    }
    parameters.push(limit + 1);
    // One row past the page tells whether another page exists without a second query.
    const query = `SELECT ${conversationColumns} FROM ${this.#tables.conversations} WHERE ${conditions.join(' AND ')}
      ORDER BY user_id, conversation_id LIMIT $${parameters.length}`;
    const rows = (await this.#pool.query<ConversationRow>(query, parameters)).rows;
    const items = rows.slice(0, limit).map(toConversation);
    const last = items[items.length - 1];
    return rows.length > limit && last !== undefined
      ? { items, nextCursor: encodeConversationCursor(last) }
      : { items };
  }

  /** Replaces the conversation's metadata and returns the row; `undefined` when it does not exist. */
  async updateConversationMetadata(scope: Scope, metadata: Metadata): Promise<Conversation | undefined> {
    const json = JSON.stringify(checkConversationMetadata(metadata));
    const row = (
      await this.#pool.query<ConversationRow>(this.#sql.updateConversationMetadata, [...scopeKey(scope), json])
    ).rows[0];
    return row === undefined ? undefined : toConversation(row);
  }

  /** Stored messages of the conversation per role; `{}` for an unknown conversation. */
  async countMessagesByRole(scope: Scope): Promise<RoleCounts> {
    return toRoleCounts(
      (await this.#pool.query<{ role: string; count: unknown }>(this.#sql.countMessagesByRole, scopeKey(scope))).rows,
    );
  }

  /** Adds a ledger entry; `not_found` when the conversation does not exist. */
  async insertUsage(scope: Scope, record: UsageRecord): Promise<void> {
    const createdAt = checkTime('createdAt', record.createdAt);
    const result = await this.#pool.query(this.#sql.insertUsage, [
      ...scopeKey(scope),
      record.kind,
      record.policy,
      checkCount('sentTokens', record.sentTokens),
      checkCount('fullHistoryTokens', record.fullHistoryTokens),
      checkCount('inputTokens', record.inputTokens ?? 0),
      checkCount('outputTokens', record.outputTokens ?? 0),
      createdAt,
    ]);
    if (result.rowCount === 0) {
      throw new MemoryError('not_found', `conversation ${scope.conversationId} does not exist`, {
        details: { field: 'conversationId' },
      });
    }
  }

  /** Sums the ledger of one conversation; zeros when it has none. */
  async getUsageTotals(scope: Scope): Promise<UsageTotals> {
    const row = (await this.#pool.query(this.#sql.selectUsageTotals, scopeKey(scope))).rows[0] ?? {};
    return toUsageTotals({
      requests: toInteger(row['requests'] ?? 0),
      sentTokens: toInteger(row['sent_tokens'] ?? 0),
      fullHistoryTokens: toInteger(row['full_history_tokens'] ?? 0),
      compactions: toInteger(row['compactions'] ?? 0),
      summarizerInputTokens: toInteger(row['input_tokens'] ?? 0),
      summarizerOutputTokens: toInteger(row['output_tokens'] ?? 0),
    });
  }

  /** The ledger of one conversation in the order written; the position is the row's identity. */
  async listUsage(scope: Scope, page: PageOptions = {}): Promise<Page<UsageEntry>> {
    const limit = resolvePageLimit(page.limit);
    const after = page.cursor === undefined ? 0 : decodePositionCursor(page.cursor);
    const rows = (await this.#pool.query(this.#sql.selectUsage, [...scopeKey(scope), after, limit + 1])).rows;
    const items = rows.slice(0, limit).map((row): UsageEntry =>
      Object.freeze({
        position: toInteger(row['position']),
        kind: row['kind'] as UsageKind,
        policy: row['policy'] as string,
        sentTokens: toInteger(row['sent_tokens']),
        fullHistoryTokens: toInteger(row['full_history_tokens']),
        inputTokens: toInteger(row['input_tokens']),
        outputTokens: toInteger(row['output_tokens']),
        createdAt: toIsoTime(row['created_at']),
      }),
    );
    const last = items[items.length - 1];
    return rows.length > limit && last !== undefined
      ? { items, nextCursor: encodePositionCursor(last.position) }
      : { items };
  }

  /** Removes a conversation with its messages, vectors, ledger, summaries, jobs and cursors, in one transaction. */
  async deleteConversation(scope: Scope): Promise<EraseResult> {
    return runInTransaction(this.#pool, async (client) => {
      const key = scopeKey(scope);
      // The row lock first: an append in flight finishes before the erase reads what to delete, and
      // one that starts later finds the row gone and creates the conversation anew.
      await client.query(this.#sql.lockConversation, key);
      return this.#deleteRows(client, this.#sql.deleteConversation, key);
    });
  }

  /** Removes every conversation of one user of one tenant with all that hangs on them (vectors, cursors), inside the caller's transaction. */
  async deleteUser(client: PostgresClient, user: UserScope): Promise<EraseResult> {
    const key = [user.tenantId, user.userId];
    // Locked in one order, so two erases of the same user cannot deadlock each other.
    await client.query(this.#sql.lockUserConversations, key);
    return this.#deleteRows(client, this.#sql.deleteUser, key);
  }

  async #deleteRows(client: PostgresQueryable, sql: Deletes, key: readonly string[]): Promise<EraseResult> {
    for (const query of sql.dependents) await client.query(query, key);
    const messages = (await client.query(sql.messages, key)).rowCount ?? 0;
    const conversations = (await client.query(sql.conversations, key)).rowCount ?? 0;
    return { conversations, messages };
  }

  // Runs under the conversation's row lock, so the count read here is the count the inserts extend: seqs
  // stay gapless with other connections and processes appending to the same conversation.
  async #appendLocked(client: PostgresClient, scope: Scope, messages: readonly NewMessage[]): Promise<Message[]> {
    const key = scopeKey(scope);
    const conversation = await this.#lockConversation(client, key, messages[0]!.createdAt);
    const storedByKey = await this.#findStoredDuplicates(client, key, messages);
    let messageCount = toInteger(conversation.message_count);
    let totalTokens = toInteger(conversation.total_tokens);
    const rows: Message[] = [];
    const result = messages.map((message) => {
      const existing = message.idempotencyKey === undefined ? undefined : storedByKey.get(message.idempotencyKey);
      if (existing !== undefined) return existing;
      messageCount += 1;
      totalTokens += message.tokens;
      const stored: Message = Object.freeze({ ...message, id: crypto.randomUUID(), seq: messageCount });
      rows.push(stored);
      if (message.idempotencyKey !== undefined) storedByKey.set(message.idempotencyKey, stored);
      return stored;
    });
    if (rows.length === 0) return result;
    await client.query(this.#sql.insertMessages, [
      ...key,
      rows.map((row) => row.id),
      rows.map((row) => row.seq),
      rows.map((row) => row.role),
      rows.map((row) => row.content),
      rows.map((row) => row.name ?? null),
      rows.map((row) => (row.toolCalls === undefined ? null : JSON.stringify(row.toolCalls))),
      rows.map((row) => row.toolCallId ?? null),
      rows.map((row) => row.createdAt),
      rows.map((row) => (row.metadata === undefined ? null : JSON.stringify(row.metadata))),
      rows.map((row) => row.tokens),
      rows.map((row) => row.idempotencyKey ?? null),
      messageCount,
      totalTokens,
      new Date().toISOString(),
    ]);
    return result;
  }

  // Locks the conversation's row, creating it first when the conversation is new. The row lock is what
  // serializes appenders across connections and processes.
  async #lockConversation(client: PostgresClient, key: readonly string[], createdAt: string): Promise<ConversationRow> {
    for (let attempt = 0; attempt < lockAttempts; attempt += 1) {
      const locked = (await client.query<ConversationRow>(this.#sql.lockConversation, key)).rows[0];
      if (locked !== undefined) return locked;
      const created = (await client.query<ConversationRow>(this.#sql.insertConversation, [...key, createdAt])).rows[0];
      if (created !== undefined) return created;
      // Another transaction created it between the two statements: the next SELECT … FOR UPDATE waits for it.
    }
    throw new MemoryError(
      'unavailable',
      `conversation ${key[2]} was erased and recreated by other writers ${lockAttempts} times during one append; retry`,
      {
        details: { retryable: true },
      },
    );
  }

  // Checks every idempotency key of the batch against the store and against earlier messages of the same
  // batch before anything is written, so a conflict anywhere leaves the conversation untouched.
  async #findStoredDuplicates(
    client: PostgresClient,
    key: readonly string[],
    messages: readonly NewMessage[],
  ): Promise<Map<string, Message>> {
    const keys = [
      ...new Set(messages.flatMap((message) => (message.idempotencyKey === undefined ? [] : [message.idempotencyKey]))),
    ];
    const stored = new Map<string, Message>();
    if (keys.length === 0) return stored;
    const rows = (await client.query<MessageRow>(this.#sql.selectByIdempotencyKeys, [...key, keys])).rows;
    for (const row of rows) stored.set(row.idempotency_key!, toMessage(row));
    const pending = new Map<string, NewMessage>();
    for (const message of messages) {
      const idempotencyKey = message.idempotencyKey;
      if (idempotencyKey === undefined) continue;
      const earlier = stored.get(idempotencyKey) ?? pending.get(idempotencyKey);
      if (earlier !== undefined && !isSameMessage(earlier, message)) throw idempotencyConflict(idempotencyKey);
      if (earlier === undefined) pending.set(idempotencyKey, message);
    }
    return stored;
  }
}

/** Maps a message row to a stored {@link Message}. */
export function toMessage(row: MessageRow): Message {
  return messageFromRow(row, toIsoTime);
}

/** Maps a `conversations` row (read with {@link conversationColumns}) to a {@link Conversation}. */
export function toConversation(row: ConversationRow): Conversation {
  return conversationFromRow(row, toIsoTime);
}

function clampSeq(field: string, value: number): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new MemoryError('invalid_input', `${field} must be a number`, { details: { field } });
  }
  return Math.min(Math.max(value, -seqLimit), seqLimit);
}

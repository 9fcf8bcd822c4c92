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
  checkCount,
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
import type { SqliteDatabase } from './sqlite-driver.js';
import { createStatementCache, type SqliteStatementCache } from './sqlite-statement-cache.js';
import { scopeKey, toEpochMs, toIsoTime } from './sqlite-values.js';

interface UsageRow {
  readonly id: number;
  readonly kind: UsageKind;
  readonly policy: string;
  readonly sent_tokens: number;
  readonly full_history_tokens: number;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly created_at: number;
}

interface UsageTotalsRow {
  readonly requests: number;
  readonly sent_tokens: number;
  readonly full_history_tokens: number;
  readonly compactions: number;
  readonly input_tokens: number;
  readonly output_tokens: number;
}

const conversationColumns = 'tenant_id, user_id, conversation_id, created_at, updated_at, message_count, total_tokens';
/** The columns every conversation read selects, as {@link toConversation} maps them. */
export const conversationReadColumns = `${conversationColumns}, summarized_through_seq, summarized_tokens, metadata, erased_messages`;
const inConversation = 'tenant_id = ? AND user_id = ? AND conversation_id = ?';

const sql = {
  selectConversation: `SELECT ${conversationReadColumns} FROM conversations WHERE ${inConversation}`,
  updateConversationMetadata: `UPDATE conversations SET metadata = ? WHERE ${inConversation} RETURNING ${conversationReadColumns}`,
  // Served by the (tenant, user, conversation, seq) unique index: one range of it, grouped.
  countMessagesByRole: `SELECT role, count(*) AS count FROM messages WHERE ${inConversation} GROUP BY role`,
  selectByIdempotencyKey: `SELECT ${messageColumns} FROM messages WHERE ${inConversation} AND idempotency_key = ?`,
  upsertConversation: `INSERT INTO conversations (${conversationColumns}) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, user_id, conversation_id)
    DO UPDATE SET updated_at = excluded.updated_at, message_count = excluded.message_count, total_tokens = excluded.total_tokens`,
  insertMessage: `INSERT INTO messages (tenant_id, user_id, conversation_id, ${messageColumns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  // The seq bounds are always bound (0 and MAX_SAFE_INTEGER when absent) and LIMIT -1 means no limit, so
  // one statement per direction serves every range.
  selectRangeAsc: `SELECT ${messageColumns} FROM messages WHERE ${inConversation} AND seq > ? AND seq < ? ORDER BY seq ASC LIMIT ?`,
  selectRangeDesc: `SELECT ${messageColumns} FROM messages WHERE ${inConversation} AND seq > ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
  // Inserting through a SELECT of the conversation makes "exists?" and "insert" one atomic statement.
  insertUsage: `INSERT INTO usage (tenant_id, user_id, conversation_id, kind, policy, sent_tokens, full_history_tokens, input_tokens, output_tokens, created_at)
    SELECT tenant_id, user_id, conversation_id, ?, ?, ?, ?, ?, ?, ? FROM conversations WHERE ${inConversation}`,
  selectUsageTotals: `SELECT count(*) FILTER (WHERE kind = 'context') AS requests, coalesce(sum(sent_tokens) FILTER (WHERE kind = 'context'), 0) AS sent_tokens,
    coalesce(sum(full_history_tokens) FILTER (WHERE kind = 'context'), 0) AS full_history_tokens, count(*) FILTER (WHERE kind = 'summarize') AS compactions,
    coalesce(sum(input_tokens) FILTER (WHERE kind = 'summarize'), 0) AS input_tokens, coalesce(sum(output_tokens) FILTER (WHERE kind = 'summarize'), 0) AS output_tokens
    FROM usage WHERE ${inConversation}`,
  selectUsage: `SELECT id, kind, policy, sent_tokens, full_history_tokens, input_tokens, output_tokens, created_at FROM usage
    WHERE ${inConversation} AND id > ? ORDER BY id LIMIT ?`,
  deleteConversationMessages: `DELETE FROM messages WHERE ${inConversation}`,
  deleteConversationUsage: `DELETE FROM usage WHERE ${inConversation}`,
  deleteConversationSummaries: `DELETE FROM summaries WHERE ${inConversation}`,
  deleteConversationJobs: `DELETE FROM jobs WHERE ${inConversation}`,
  deleteConversation: `DELETE FROM conversations WHERE ${inConversation}`,
  deleteUserMessages: 'DELETE FROM messages WHERE tenant_id = ? AND user_id = ?',
  deleteUserUsage: 'DELETE FROM usage WHERE tenant_id = ? AND user_id = ?',
  deleteUserSummaries: 'DELETE FROM summaries WHERE tenant_id = ? AND user_id = ?',
  deleteUserJobs: 'DELETE FROM jobs WHERE tenant_id = ? AND user_id = ?',
  deleteUserConversations: 'DELETE FROM conversations WHERE tenant_id = ? AND user_id = ?',
} as const;

/**
 * The SQL of conversations, messages and the usage ledger, run synchronously on one connection. Every
 * statement is prepared once, on first use, and cached. Methods throw `MemoryError`s for bad input,
 * conflicts and missing rows, and let driver errors through for the caller to wrap.
 */
export class SqliteMessageStore {
  readonly #database: SqliteDatabase;
  readonly #statement: SqliteStatementCache;

  constructor(database: SqliteDatabase) {
    this.#database = database;
    this.#statement = createStatementCache(database);
  }

  /** Appends in one `BEGIN IMMEDIATE` transaction: idempotency is checked for the whole batch before any write. */
  appendMessages(scope: Scope, messages: readonly NewMessage[]): Message[] {
    if (messages.length === 0) return [];
    messages.forEach(checkStorableMessage);
    return this.#database.transaction(() => this.#appendLocked(scope, messages)).immediate();
  }

  /** Messages of one conversation in the range, in seq order; `[]` for an unknown conversation. */
  listMessages(scope: Scope, range: MessageRange = {}): Message[] {
    const afterSeq = checkSeqBound('afterSeq', range.afterSeq) ?? 0;
    const beforeSeq = checkSeqBound('beforeSeq', range.beforeSeq) ?? Number.MAX_SAFE_INTEGER;
    const limit = checkRangeLimit(range.limit) ?? -1;
    // Rows as arrays: the driver builds an object per row far slower than JavaScript does (the context
    // builder reads a page of 128 messages per request). These two statements are read only here.
    const statement = this.#statement(range.order === 'desc' ? sql.selectRangeDesc : sql.selectRangeAsc).raw(true);
    const rows = statement.all(...scopeKey(scope), afterSeq, beforeSeq, limit) as MessageValues[];
    return rows.map((values) => toMessage(fromMessageValues(values)));
  }

  /** The conversation's row, or `undefined`. */
  getConversation(scope: Scope): Conversation | undefined {
    const row = this.#statement(sql.selectConversation).get(...scopeKey(scope)) as ConversationRow | undefined;
    return row === undefined ? undefined : toConversation(row);
  }

  /** One page of a tenant's conversations ordered by user id, then conversation id (byte order). */
  listConversations(filter: ConversationFilter, page: PageOptions = {}): Page<Conversation> {
    const limit = resolvePageLimit(page.limit);
    const after = page.cursor === undefined ? undefined : decodeConversationCursor(page.cursor);
    const conditions = ['tenant_id = ?'];
    const parameters: unknown[] = [filter.tenantId];
    if (filter.userId !== undefined) {
      conditions.push('user_id = ?');
      parameters.push(filter.userId);
    }
    if (filter.search !== undefined) {
      // instr, not LIKE: the search text is matched literally, with no wildcards to escape.
      conditions.push('(instr(lower(user_id), lower(?)) > 0 OR instr(lower(conversation_id), lower(?)) > 0)');
      parameters.push(filter.search, filter.search);
    }
    if (after !== undefined) {
      conditions.push('(user_id, conversation_id) > (?, ?)');
      parameters.push(after.userId, after.conversationId);
    }
    const query = `SELECT ${conversationReadColumns} FROM conversations WHERE ${conditions.join(' AND ')}
      ORDER BY user_id, conversation_id LIMIT ?`;
    // One row past the page tells whether another page exists without a second query.
    const rows = this.#statement(query).all(...parameters, limit + 1) as ConversationRow[];
    const items = rows.slice(0, limit).map(toConversation);
    const last = items[items.length - 1];
    return rows.length > limit && last !== undefined
      ? { items, nextCursor: encodeConversationCursor(last) }
      : { items };
  }

  /** Replaces the conversation's metadata and returns the row; `undefined` when it does not exist. */
  updateConversationMetadata(scope: Scope, metadata: Metadata): Conversation | undefined {
    const json = JSON.stringify(checkConversationMetadata(metadata));
    const row = this.#statement(sql.updateConversationMetadata).get(json, ...scopeKey(scope)) as
      ConversationRow | undefined;
    return row === undefined ? undefined : toConversation(row);
  }

  /** Stored messages of the conversation per role; `{}` for an unknown conversation. */
  countMessagesByRole(scope: Scope): RoleCounts {
    return toRoleCounts(
      this.#statement(sql.countMessagesByRole).all(...scopeKey(scope)) as { role: string; count: number }[],
    );
  }

  /** Adds a ledger entry; `not_found` when the conversation does not exist. */
  insertUsage(scope: Scope, record: UsageRecord): void {
    const createdAtMs = toEpochMs('createdAt', record.createdAt);
    checkCount('sentTokens', record.sentTokens);
    checkCount('fullHistoryTokens', record.fullHistoryTokens);
    checkCount('inputTokens', record.inputTokens ?? 0);
    checkCount('outputTokens', record.outputTokens ?? 0);
    const result = this.#statement(sql.insertUsage).run(
      record.kind,
      record.policy,
      record.sentTokens,
      record.fullHistoryTokens,
      record.inputTokens ?? 0,
      record.outputTokens ?? 0,
      createdAtMs,
      ...scopeKey(scope),
    );
    if (result.changes === 0) {
      throw new MemoryError('not_found', `conversation ${scope.conversationId} does not exist`, {
        details: { field: 'conversationId' },
      });
    }
  }

  /** Sums the ledger of one conversation; zeros when it has none. */
  getUsageTotals(scope: Scope): UsageTotals {
    const row = this.#statement(sql.selectUsageTotals).get(...scopeKey(scope)) as UsageTotalsRow;
    return toUsageTotals({
      requests: row.requests,
      sentTokens: row.sent_tokens,
      fullHistoryTokens: row.full_history_tokens,
      compactions: row.compactions,
      summarizerInputTokens: row.input_tokens,
      summarizerOutputTokens: row.output_tokens,
    });
  }

  /** The ledger of one conversation in the order written; the position is the row id. */
  listUsage(scope: Scope, page: PageOptions = {}): Page<UsageEntry> {
    const limit = resolvePageLimit(page.limit);
    const after = page.cursor === undefined ? 0 : decodePositionCursor(page.cursor);
    const rows = this.#statement(sql.selectUsage).all(...scopeKey(scope), after, limit + 1) as UsageRow[];
    const items = rows.slice(0, limit).map((row): UsageEntry =>
      Object.freeze({
        position: row.id,
        kind: row.kind,
        policy: row.policy,
        sentTokens: row.sent_tokens,
        fullHistoryTokens: row.full_history_tokens,
        inputTokens: row.input_tokens,
        outputTokens: row.output_tokens,
        createdAt: toIsoTime(row.created_at),
      }),
    );
    const last = items[items.length - 1];
    return rows.length > limit && last !== undefined
      ? { items, nextCursor: encodePositionCursor(last.position) }
      : { items };
  }

  /** Removes a conversation, its messages and its ledger in one transaction. */
  deleteConversation(scope: Scope): EraseResult {
    const key = scopeKey(scope);
    return this.#database
      .transaction(() => {
        // Children first: the foreign keys refuse a conversation row removed under its messages.
        const messages = this.#statement(sql.deleteConversationMessages).run(...key).changes;
        this.#statement(sql.deleteConversationUsage).run(...key);
        this.#statement(sql.deleteConversationSummaries).run(...key);
        this.#statement(sql.deleteConversationJobs).run(...key);
        const conversations = this.#statement(sql.deleteConversation).run(...key).changes;
        return { conversations, messages };
      })
      .immediate();
  }

  /** Removes every conversation of one user of one tenant, with messages and ledger, in one transaction. */
  deleteUser(user: UserScope): EraseResult {
    const key = [user.tenantId, user.userId];
    return this.#database
      .transaction(() => {
        const messages = this.#statement(sql.deleteUserMessages).run(...key).changes;
        this.#statement(sql.deleteUserUsage).run(...key);
        this.#statement(sql.deleteUserSummaries).run(...key);
        this.#statement(sql.deleteUserJobs).run(...key);
        const conversations = this.#statement(sql.deleteUserConversations).run(...key).changes;
        return { conversations, messages };
      })
      .immediate();
  }

  // Runs under the write lock, so the count read here is the count the inserts extend: seqs stay gapless
  // even with other processes appending to the same conversation.
  #appendLocked(scope: Scope, messages: readonly NewMessage[]): Message[] {
    const key = scopeKey(scope);
    const conversation = this.#statement(sql.selectConversation).get(...key) as ConversationRow | undefined;
    const storedByKey = this.#findStoredDuplicates(scope, messages);
    let messageCount = Number(conversation?.message_count ?? 0);
    let totalTokens = Number(conversation?.total_tokens ?? 0);
    const rows: MessageRow[] = [];
    const result = messages.map((message) => {
      const existing = message.idempotencyKey === undefined ? undefined : storedByKey.get(message.idempotencyKey);
      if (existing !== undefined) return existing;
      messageCount += 1;
      totalTokens += message.tokens;
      const row = toMessageRow(message, crypto.randomUUID(), messageCount);
      rows.push(row);
      const stored = toMessage(row);
      if (message.idempotencyKey !== undefined) storedByKey.set(message.idempotencyKey, stored);
      return stored;
    });
    const first = rows[0];
    if (first === undefined) return result;
    // The conversation row goes first: the messages' foreign key needs it.
    this.#statement(sql.upsertConversation).run(
      ...key,
      conversation?.created_at ?? first.created_at,
      Date.now(),
      messageCount,
      totalTokens,
    );
    const insert = this.#statement(sql.insertMessage);
    for (const row of rows) {
      insert.run(
        ...key,
        row.id,
        row.seq,
        row.role,
        row.content,
        row.name,
        row.tool_calls,
        row.tool_call_id,
        row.created_at,
        row.metadata,
        row.tokens,
        row.idempotency_key,
      );
    }
    return result;
  }

  // Checks every idempotency key of the batch against the store and against earlier messages of the same
  // batch before anything is written, so a conflict anywhere leaves the conversation untouched.
  #findStoredDuplicates(scope: Scope, messages: readonly NewMessage[]): Map<string, Message> {
    const stored = new Map<string, Message>();
    const pending = new Map<string, NewMessage>();
    for (const message of messages) {
      const key = message.idempotencyKey;
      if (key === undefined) continue;
      let earlier: NewMessage | undefined = stored.get(key) ?? pending.get(key);
      if (earlier === undefined) {
        const row = this.#statement(sql.selectByIdempotencyKey).get(...scopeKey(scope), key) as MessageRow | undefined;
        const found = row === undefined ? undefined : toMessage(row);
        if (found === undefined) pending.set(key, message);
        else stored.set(key, found);
        earlier = found;
      }
      if (earlier !== undefined && !isSameMessage(earlier, message)) throw idempotencyConflict(key);
    }
    return stored;
  }
}

function toMessageRow(message: NewMessage, id: string, seq: number): MessageRow {
  return {
    id,
    seq,
    role: message.role,
    content: message.content,
    name: message.name ?? null,
    tool_calls: message.toolCalls === undefined ? null : JSON.stringify(message.toolCalls),
    tool_call_id: message.toolCallId ?? null,
    created_at: Date.parse(message.createdAt),
    metadata: message.metadata === undefined ? null : JSON.stringify(message.metadata),
    tokens: message.tokens,
    idempotency_key: message.idempotencyKey ?? null,
  };
}

/** A `messages` row read as an array of column values, in {@link messageColumns} order. */
type MessageValues = readonly [
  string,
  number,
  string,
  string,
  string | null,
  string | null,
  string | null,
  number,
  string | null,
  number,
  string | null,
];

function fromMessageValues(values: MessageValues): MessageRow {
  const [id, seq, role, content, name, tool_calls, tool_call_id, created_at, metadata, tokens, idempotency_key] =
    values;
  return { id, seq, role, content, name, tool_calls, tool_call_id, created_at, metadata, tokens, idempotency_key };
}

/** Maps a message row to a stored {@link Message}. */
export function toMessage(row: MessageRow): Message {
  return messageFromRow(row, toIsoTime);
}

/** Maps a `conversations` row (read with the watermark columns) to a {@link Conversation}. */
export function toConversation(row: ConversationRow): Conversation {
  return conversationFromRow(row, toIsoTime);
}

function checkSeqBound(field: string, value: number | undefined): number | undefined {
  if (value === undefined || (typeof value === 'number' && !Number.isNaN(value))) return value;
  throw new MemoryError('invalid_input', `${field} must be a number`, { details: { field } });
}

function checkRangeLimit(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  checkCount('limit', value);
  return value;
}

import { MemoryError } from '../errors/memory-error.js';
import type { Message, NewMessage } from '../messages/message.js';
import type { Scope, UserScope } from '../messages/scope.js';
import type { UsageRecord, UsageTotals } from '../usage/usage.js';
import { decodeConversationCursor, encodeConversationCursor, resolvePageLimit } from './page-cursor.js';
import { isSameMessage } from './same-message.js';
import type { Conversation, ConversationFilter, EraseResult, MessageRange, Page, PageOptions, Store } from './store.js';

interface ConversationState {
  conversation: Conversation;
  readonly messages: Message[];
  readonly byIdempotencyKey: Map<string, Message>;
  readonly usage: UsageRecord[];
}

/**
 * A {@link Store} held in process memory: for tests, demos and `:memory:` use. It passes the same
 * conformance suite as the durable stores; everything is lost when the process ends.
 */
export class InMemoryStore implements Store {
  readonly #conversations = new Map<string, ConversationState>();
  #closed = false;

  async appendMessages(scope: Scope, messages: readonly NewMessage[]): Promise<Message[]> {
    this.#checkOpen();
    const key = conversationKey(scope);
    let state = this.#conversations.get(key);
    // Validate every idempotency conflict before changing anything: a batch lands whole or not at all.
    const pending = new Map<string, NewMessage>();
    for (const message of messages) {
      if (message.idempotencyKey === undefined) continue;
      const earlier = state?.byIdempotencyKey.get(message.idempotencyKey) ?? pending.get(message.idempotencyKey);
      if (earlier !== undefined && !isSameMessage(earlier, message)) throw idempotencyConflict(message.idempotencyKey);
      pending.set(message.idempotencyKey, message);
    }
    if (state === undefined) {
      const now = messages[0]?.createdAt ?? new Date().toISOString();
      state = {
        conversation: { ...scope, createdAt: now, updatedAt: now, messageCount: 0, totalTokens: 0 },
        messages: [],
        byIdempotencyKey: new Map(),
        usage: [],
      };
      this.#conversations.set(key, state);
    }
    const result: Message[] = [];
    for (const message of messages) {
      const existing = message.idempotencyKey === undefined ? undefined : state.byIdempotencyKey.get(message.idempotencyKey);
      if (existing !== undefined) {
        result.push(existing);
        continue;
      }
      const stored: Message = Object.freeze({ ...message, id: crypto.randomUUID(), seq: state.messages.length + 1 });
      state.messages.push(stored);
      if (stored.idempotencyKey !== undefined) state.byIdempotencyKey.set(stored.idempotencyKey, stored);
      state.conversation = {
        ...state.conversation,
        updatedAt: new Date().toISOString(),
        messageCount: state.messages.length,
        totalTokens: state.conversation.totalTokens + stored.tokens,
      };
      result.push(stored);
    }
    return result;
  }

  async listMessages(scope: Scope, range: MessageRange = {}): Promise<Message[]> {
    this.#checkOpen();
    const all = this.#conversations.get(conversationKey(scope))?.messages ?? [];
    const selected = all.filter(
      (message) => message.seq > (range.afterSeq ?? 0) && message.seq < (range.beforeSeq ?? Number.POSITIVE_INFINITY),
    );
    if (range.order === 'desc') selected.reverse();
    return range.limit === undefined ? selected : selected.slice(0, range.limit);
  }

  async getConversation(scope: Scope): Promise<Conversation | undefined> {
    this.#checkOpen();
    return this.#conversations.get(conversationKey(scope))?.conversation;
  }

  async listConversations(filter: ConversationFilter, page: PageOptions = {}): Promise<Page<Conversation>> {
    this.#checkOpen();
    const limit = resolvePageLimit(page.limit);
    const after = page.cursor === undefined ? undefined : decodeConversationCursor(page.cursor);
    const matching = [...this.#conversations.values()]
      .map((state) => state.conversation)
      .filter((c) => c.tenantId === filter.tenantId && (filter.userId === undefined || c.userId === filter.userId))
      .filter((c) => after === undefined || compareIds(c, after) > 0)
      .sort(compareIds);
    const items = matching.slice(0, limit);
    const last = items[items.length - 1];
    return matching.length > limit && last !== undefined ? { items, nextCursor: encodeConversationCursor(last) } : { items };
  }

  async insertUsage(scope: Scope, record: UsageRecord): Promise<void> {
    this.#checkOpen();
    const state = this.#conversations.get(conversationKey(scope));
    if (state === undefined) throw new MemoryError('not_found', `conversation ${scope.conversationId} does not exist`);
    state.usage.push({ ...record });
  }

  async getUsageTotals(scope: Scope): Promise<UsageTotals> {
    this.#checkOpen();
    const usage = this.#conversations.get(conversationKey(scope))?.usage ?? [];
    const sentTokens = usage.reduce((sum, record) => sum + record.sentTokens, 0);
    const fullHistoryTokens = usage.reduce((sum, record) => sum + record.fullHistoryTokens, 0);
    return { requests: usage.length, sentTokens, fullHistoryTokens, savedTokens: fullHistoryTokens - sentTokens };
  }

  async deleteConversation(scope: Scope): Promise<EraseResult> {
    this.#checkOpen();
    const key = conversationKey(scope);
    const state = this.#conversations.get(key);
    this.#conversations.delete(key);
    return { conversations: state === undefined ? 0 : 1, messages: state?.messages.length ?? 0 };
  }

  async deleteUser(user: UserScope): Promise<EraseResult> {
    this.#checkOpen();
    let conversations = 0;
    let messages = 0;
    for (const [key, state] of this.#conversations) {
      if (state.conversation.tenantId !== user.tenantId || state.conversation.userId !== user.userId) continue;
      this.#conversations.delete(key);
      conversations += 1;
      messages += state.messages.length;
    }
    return { conversations, messages };
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #checkOpen(): void {
    if (this.#closed) throw new MemoryError('unavailable', 'the store is closed');
  }
}

/** Error for an idempotency key reused with a different message; shared by every adapter. */
export function idempotencyConflict(key: string): MemoryError {
  return new MemoryError('conflict', `idempotency key ${JSON.stringify(key)} was already used for a different message`, {
    details: { field: 'idempotencyKey', idempotencyKey: key },
  });
}

function conversationKey(scope: Scope): string {
  return JSON.stringify([scope.tenantId, scope.userId, scope.conversationId]);
}

function compareIds(a: { userId: string; conversationId: string }, b: { userId: string; conversationId: string }): number {
  return compareText(a.userId, b.userId) || compareText(a.conversationId, b.conversationId);
}

// Byte-wise (code unit) order, the same order SQLite's BINARY collation and Postgres "C" collation use.
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

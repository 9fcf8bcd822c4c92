import type { Message, NewMessage } from '../messages/message.js';
import type { Scope, UserScope } from '../messages/scope.js';
import type { UsageRecord, UsageTotals } from '../usage/usage.js';

/** A conversation's row: created by its first append, counters kept by the store in the same transaction. */
export interface Conversation {
  readonly tenantId: string;
  readonly userId: string;
  readonly conversationId: string;
  /** ISO 8601 time of the first append. */
  readonly createdAt: string;
  /** ISO 8601 time of the last append. */
  readonly updatedAt: string;
  /** Messages stored; equals the last `seq`, since seqs are gapless from 1. */
  readonly messageCount: number;
  /** Sum of the stored messages' `tokens`: what sending the whole history costs, before request overhead. */
  readonly totalTokens: number;
}

/** One page of a cursor-paged listing; `nextCursor` is absent on the last page. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor?: string;
}

/** Options of a cursor-paged listing. */
export interface PageOptions {
  /** Opaque cursor from the previous page's `nextCursor`. */
  readonly cursor?: string;
  /** Page size, 1–1000; default 100. */
  readonly limit?: number;
}

/** Which messages of a conversation to read: a seq range, a direction and a count. */
export interface MessageRange {
  /** Only messages with `seq > afterSeq`. */
  readonly afterSeq?: number;
  /** Only messages with `seq < beforeSeq`. */
  readonly beforeSeq?: number;
  /** Most messages to return; default all. */
  readonly limit?: number;
  /** `asc` (oldest first, default) or `desc` (newest first). */
  readonly order?: 'asc' | 'desc';
}

/** The tenant (and, optionally, the one user) whose conversations to list. */
export interface ConversationFilter {
  readonly tenantId: string;
  readonly userId?: string;
}

/** What an erase removed. */
export interface EraseResult {
  readonly conversations: number;
  readonly messages: number;
}

/** Options every store call accepts. */
export interface CallOptions {
  readonly signal?: AbortSignal;
}

/**
 * The storage port every adapter implements. Every method is scoped by tenant; an adapter must never
 * read or write a row of another tenant. Failures are `MemoryError`s (`storage_failed` wrapping the
 * driver error, `conflict`, `invalid_input`); no method returns empty data in place of an error.
 */
export interface Store {
  /**
   * Appends messages to a conversation, creating it on first use, in one transaction: each gets the
   * next gapless `seq`. A message whose `idempotencyKey` is already stored in the conversation is not
   * stored again; the stored one is returned in its place (`conflict` if role or content differ).
   * Safe under concurrent callers, in one process or many. Returns the messages in input order.
   */
  appendMessages(scope: Scope, messages: readonly NewMessage[], options?: CallOptions): Promise<Message[]>;
  /** Reads messages of one conversation in seq order; an unknown conversation has none. */
  listMessages(scope: Scope, range?: MessageRange, options?: CallOptions): Promise<Message[]>;
  /** The conversation's row, or `undefined` when it has no messages. */
  getConversation(scope: Scope, options?: CallOptions): Promise<Conversation | undefined>;
  /** Conversations of a tenant (or one of its users), ordered by user id then conversation id. */
  listConversations(filter: ConversationFilter, page?: PageOptions, options?: CallOptions): Promise<Page<Conversation>>;
  /** Records one entry of the usage ledger (what a context build or a model call cost). */
  insertUsage(scope: Scope, record: UsageRecord, options?: CallOptions): Promise<void>;
  /** Sums the usage ledger of one conversation. */
  getUsageTotals(scope: Scope, options?: CallOptions): Promise<UsageTotals>;
  /** Erases a conversation: its row, messages and usage entries. Erasing twice is not an error. */
  deleteConversation(scope: Scope, options?: CallOptions): Promise<EraseResult>;
  /** Erases everything of one user of one tenant. */
  deleteUser(user: UserScope, options?: CallOptions): Promise<EraseResult>;
  /** Releases connections and files. Calls after `close` fail with `unavailable`. */
  close(): Promise<void>;
}

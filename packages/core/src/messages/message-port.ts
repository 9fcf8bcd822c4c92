import type { PortCalls } from '../store/port.js';
import type { CallOptions, Conversation, ConversationFilter, MessageRange, Page, PageOptions } from '../store/store.js';
import type { RoleCounts } from './conversation-metadata.js';
import type { Message, Metadata, NewMessage } from './message.js';
import type { Scope } from './scope.js';

/** Conversations and their messages. Part of the `Store` port; an adapter implements it as a `StorePart<MessagePort>`. */
export interface MessagePort {
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
  /**
   * Replaces the conversation's metadata object whole (a caller that merges reads, merges and writes; the
   * last write wins) and returns the updated row; `undefined` when the conversation does not exist, which
   * this never creates. Leaves `updatedAt` (the last append) alone. `invalid_input` unless `metadata` is a
   * plain JSON object of at most 16,384 characters of JSON (`checkConversationMetadata`).
   */
  updateConversationMetadata(
    scope: Scope,
    metadata: Metadata,
    options?: CallOptions,
  ): Promise<Conversation | undefined>;
  /** How many stored messages of each role the conversation has; roles without messages are absent, `{}` for an unknown conversation. */
  countMessagesByRole(scope: Scope, options?: CallOptions): Promise<RoleCounts>;
}

/** What each method of {@link MessagePort} does, in the words of an error, and the index of its call options. */
export const messagePortCalls: PortCalls<MessagePort> = {
  appendMessages: ['appending messages', 2],
  listMessages: ['listing messages', 2],
  getConversation: ['reading a conversation', 1],
  listConversations: ['listing conversations', 2],
  updateConversationMetadata: ['updating conversation metadata', 2],
  countMessagesByRole: ['counting messages by role', 1],
};

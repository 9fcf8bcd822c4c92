import type { Scope } from '../messages/scope.js';
import type { RoleCounts } from '../messages/conversation-metadata.js';
import type { CallOptions, Conversation, Store } from '../store/store.js';
import type { UsageTotals } from '../usage/usage.js';

/**
 * A conversation's counters and metadata, the times of its first and last message, how many messages of
 * each role it holds, and the sums of its usage ledger.
 */
export interface ConversationStats extends Conversation {
  readonly firstMessageAt: string;
  readonly lastMessageAt: string;
  /** Stored messages per role; roles without messages are absent. */
  readonly roles: RoleCounts;
  readonly usage: UsageTotals;
}

/** Reads {@link ConversationStats}; `undefined` for a conversation without messages. */
export async function getConversationStats(
  store: Store,
  scope: Scope,
  options?: CallOptions,
): Promise<ConversationStats | undefined> {
  const conversation = await store.getConversation(scope, options);
  if (conversation === undefined) return undefined;
  const [first] = await store.listMessages(scope, { limit: 1 }, options);
  const [last] = await store.listMessages(scope, { order: 'desc', limit: 1 }, options);
  const roles = await store.countMessagesByRole(scope, options);
  const usage = await store.getUsageTotals(scope, options);
  return {
    ...conversation,
    firstMessageAt: first?.createdAt ?? conversation.createdAt,
    lastMessageAt: last?.createdAt ?? conversation.updatedAt,
    roles,
    usage,
  };
}

import type { Scope, UserScope } from '../messages/scope.js';
import type { EraseMessagesOptions, ErasureAuditEntry, ErasureReceipt, MessageSelection } from './message-erasure.js';
import type { PortCalls } from './port.js';
import type { CallOptions, EraseResult } from './store.js';

/** Erasure across every concept, and its audit log. Part of the `Store` port; an adapter implements it as a `StorePart<ErasurePort>`. */
export interface ErasurePort {
  /** Erases a conversation: its row, messages, vectors, summaries, jobs, cursors and usage entries. Erasing twice is not an error. */
  deleteConversation(scope: Scope, options?: CallOptions): Promise<EraseResult>;
  /** Erases everything of one user of one tenant: conversations and all that hangs on them (vectors, cursors), facts, entities, relations and memory files. */
  deleteUser(user: UserScope, options?: CallOptions): Promise<EraseResult>;
  /**
   * Erases some of a user's messages (one, a seq range, or those before a time; {@link MessageSelection})
   * in one transaction, with everything derived from them: their vectors of every model, every summary
   * that covered one (the watermark goes back to the newest summary left, so compaction folds what remains
   * again), the facts and relations whose every source was erased (others lose the erased sources), and the
   * entities only those relations named; the conversations' counters drop the erased tokens and count the
   * erased messages. Writes an audit entry with the selection and the counts, never the content, and
   * returns the receipt. Stores that can make the file itself forget the bytes do so (SQLite: secure
   * delete and a WAL checkpoint). Erasing what is not there is not an error (a receipt of zeros).
   * `invalid_input` for a bad selection.
   */
  eraseMessages(
    user: UserScope,
    selection: MessageSelection,
    options: CallOptions & EraseMessagesOptions,
  ): Promise<ErasureReceipt>;
  /** The audit log of erasures of a tenant (or one user), oldest first: selection, time and counts. */
  listErasures(filter: { tenantId: string; userId?: string }, options?: CallOptions): Promise<ErasureAuditEntry[]>;
}

/** What each method of {@link ErasurePort} does, in the words of an error, and the index of its call options. */
export const erasurePortCalls: PortCalls<ErasurePort> = {
  deleteConversation: ['erasing a conversation', 1],
  deleteUser: ['erasing a user', 1],
  eraseMessages: ['erasing messages', 2],
  listErasures: ['listing erasures', 1],
};

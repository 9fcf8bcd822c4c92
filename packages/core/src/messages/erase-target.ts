import { MemoryError } from '../errors/memory-error.js';
import type { CallOptions, EraseResult, Store } from '../store/store.js';
import { resolveScope, resolveUserScope } from './scope.js';

/** Who to erase: one conversation, or (without `conversationId`) everything of a user. */
export interface EraseTarget {
  readonly tenantId?: string;
  readonly userId?: string;
  readonly conversationId?: string;
}

/**
 * Erases what the target names: with a `conversationId`, that conversation (its messages, summaries,
 * usage, vectors and jobs); otherwise everything of the `userId` (facts, entities and memory files too).
 * `invalid_input` when the target names neither.
 */
export async function eraseTarget(
  store: Pick<Store, 'deleteConversation' | 'deleteUser'>,
  target: EraseTarget,
  options?: CallOptions,
): Promise<EraseResult> {
  if (target.conversationId !== undefined)
    return store.deleteConversation(resolveScope({ ...target, conversationId: target.conversationId }), options);
  if (target.userId === undefined)
    throw new MemoryError('invalid_input', 'erase needs a conversationId or a userId', {
      details: { field: 'userId' },
    });
  return store.deleteUser(resolveUserScope(target), options);
}

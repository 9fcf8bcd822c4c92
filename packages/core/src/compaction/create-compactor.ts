import type { JobHandler } from '../jobs/job-worker.js';
import type { Scope } from '../messages/scope.js';
import type { CallOptions, Conversation, Store } from '../store/store.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { compactConversation } from './compact-conversation.js';
import type { CompactionSettings } from './compaction-settings.js';
import { isCompactionDue } from './plan-compaction.js';
import type { Summary } from './summary.js';
import type { Summarizer } from './summarizer.js';

/** Options of {@link createCompactor}. */
export interface CompactorOptions {
  readonly store: Store;
  readonly summarizer: Summarizer;
  readonly tokenCounter: TokenCounter;
  readonly settings: CompactionSettings;
  /** Leases a compaction job may take before it is given up. Default 5. */
  readonly maxAttempts?: number;
  readonly now?: () => number;
}

/** Queues compaction when a conversation needs it, and runs it (as a job handler, or inline). */
export interface Compactor {
  readonly settings: CompactionSettings;
  /** Queues a compaction job when the conversation's raw backlog passed the trigger; true when it did. */
  enqueueIfDue(scope: Scope, conversation: Conversation, options?: CallOptions): Promise<boolean>;
  /** Compacts now, in the caller; with `force`, folds everything but the kept recent turns even below the trigger. */
  compact(scope: Scope, options?: { force?: boolean; signal?: AbortSignal }): Promise<Summary[]>;
  /** The handler for `compact` jobs. */
  readonly handler: JobHandler;
}

/** Creates a {@link Compactor}. */
export function createCompactor(options: CompactorOptions): Compactor {
  const now = options.now ?? Date.now;
  const dependencies = { ...options, now };
  const maxAttempts = options.maxAttempts ?? 5;
  return Object.freeze({
    settings: options.settings,
    async enqueueIfDue(scope: Scope, conversation: Conversation, callOptions?: CallOptions) {
      const backlog = {
        rawMessages: conversation.messageCount - conversation.summarizedThroughSeq,
        rawTokens: conversation.totalTokens - conversation.summarizedTokens,
        neverCompacted: conversation.summarizedThroughSeq === 0,
      };
      if (!isCompactionDue(backlog, options.settings)) return false;
      await options.store.enqueueJob(
        scope,
        { kind: 'compact', runAt: new Date(now()).toISOString(), maxAttempts },
        callOptions,
      );
      return true;
    },
    compact: (scope: Scope, compactOptions: { force?: boolean; signal?: AbortSignal } = {}) =>
      compactConversation(dependencies, scope, compactOptions),
    handler: (async (_job, scope, signal, slice) => {
      const written = await compactConversation(dependencies, scope, { signal, slice });
      const fallbacks = written.filter((summary) => summary.fallbackReason !== undefined);
      // The summary is stored either way; the job says it came from the fallback summarizer, and why.
      if (fallbacks.length === 0) return {};
      return {
        warning: `summarizer fell back for ${fallbacks.length} of ${written.length} summaries: ${fallbacks[0]!.fallbackReason}`,
      };
    }) satisfies JobHandler,
  });
}

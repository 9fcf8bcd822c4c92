import type { Compactor } from '../compaction/create-compactor.js';
import type { JobKind } from '../jobs/job.js';
import { createJobWorker, type JobHandler, type JobWorker, type JobWorkerOptions } from '../jobs/job-worker.js';
import type { Scope } from '../messages/scope.js';
import type { Embedder } from '../recall/embedder.js';
import { embedConversation } from '../recall/embed-conversation.js';
import type { CallOptions, Store } from '../store/store.js';

/** The background jobs of one memory: which run, the worker that runs them, and what an append queues. */
export interface BackgroundWork {
  readonly worker: JobWorker;
  /** Queues the jobs a new message calls for (compaction when due, embedding, extraction) and wakes the worker. */
  afterAppend(scope: Scope, options?: CallOptions): Promise<void>;
}

/** Options of {@link createBackgroundWork}. */
export interface BackgroundWorkOptions {
  readonly store: Store;
  readonly compactor?: Compactor;
  readonly embedder?: Embedder;
  /** The `extract` job body, when facts/graph extraction is on. */
  readonly extract?: JobHandler;
  readonly worker?: Omit<JobWorkerOptions, 'store' | 'handlers' | 'now'> & { readonly autoStart?: boolean };
  readonly now: () => number;
}

// Embedding and extraction are idempotent and cheap to retry; a few attempts cover a flaky model.
const maxAttempts = 5;

/** Wires compaction, embedding and extraction jobs onto one job worker (started unless `autoStart: false`). */
export function createBackgroundWork(options: BackgroundWorkOptions): BackgroundWork {
  const { store, compactor, embedder, extract, now } = options;
  const handlers: Partial<Record<JobKind, JobHandler>> = {};
  if (compactor !== undefined) handlers.compact = compactor.handler;
  if (embedder !== undefined) handlers.embed = async (_job, scope, signal) => void (await embedConversation({ store, embedder }, scope, signal));
  if (extract !== undefined) handlers.extract = extract;
  const { autoStart, ...workerOptions } = options.worker ?? {};
  const worker = createJobWorker({ store, handlers, now, ...workerOptions });
  if (Object.keys(handlers).length > 0 && autoStart !== false) worker.start();

  return Object.freeze({
    worker,
    async afterAppend(scope: Scope, callOptions?: CallOptions) {
      let queued = false;
      const runAt = new Date(now()).toISOString();
      if (compactor !== undefined) {
        const conversation = await store.getConversation(scope, callOptions);
        if (conversation !== undefined) queued = (await compactor.enqueueIfDue(scope, conversation, callOptions)) || queued;
      }
      for (const kind of ['embed', 'extract'] as const) {
        if (handlers[kind] === undefined) continue;
        await store.enqueueJob(scope, { kind, runAt, maxAttempts }, callOptions);
        queued = true;
      }
      if (queued) worker.nudge();
    },
  });
}

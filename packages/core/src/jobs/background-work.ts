import type { Compactor } from '../compaction/create-compactor.js';
import type { JobKind } from './job.js';
import { MemoryError } from '../errors/memory-error.js';
import { createJobWorker, type JobHandler, type JobWorker, type JobWorkerOptions } from './job-worker.js';
import type { Message } from '../messages/message.js';
import type { Scope } from '../messages/scope.js';
import type { Embedder } from '../recall/embedder.js';
import { embedAppended, embedConversation } from './embed-conversation.js';
import type { CallOptions, Store } from '../store/store.js';

/** The background jobs of one memory: which run, the worker that runs them, and what an append queues. */
export interface BackgroundWork {
  readonly worker: JobWorker;
  /**
   * Queues the jobs new messages call for (compaction when due, embedding, extraction) and wakes the
   * worker. With an embedder that embeds in-thread (`embedSync`), the `appended` messages are embedded
   * here and now instead of by a job, so their vectors are written with them; should that fail, the
   * embed job is queued as before.
   */
  afterAppend(scope: Scope, options?: CallOptions, appended?: readonly Message[]): Promise<void>;
}

/** Options of {@link createBackgroundWork}. */
export interface BackgroundWorkOptions {
  readonly store: Store;
  readonly compactor?: Compactor;
  readonly embedder?: Embedder;
  /** The `extract` job body, when facts/graph extraction is on. */
  readonly extract?: JobHandler;
  /** `concurrency`: job loops in this process (default 1), so one slow job does not hold the others. */
  readonly worker?: Omit<JobWorkerOptions, 'store' | 'handlers' | 'now'> & {
    readonly autoStart?: boolean;
    readonly concurrency?: number;
  };
  readonly now: () => number;
}

// Embedding and extraction are idempotent and cheap to retry; a few attempts cover a flaky model.
const maxAttempts = 5;

/** Wires compaction, embedding and extraction jobs onto one job worker (started unless `autoStart: false`). */
export function createBackgroundWork(options: BackgroundWorkOptions): BackgroundWork {
  const { store, compactor, embedder, extract, now } = options;
  const handlers: Partial<Record<JobKind, JobHandler>> = {};
  if (compactor !== undefined) handlers.compact = compactor.handler;
  if (embedder !== undefined)
    handlers.embed = async (_job, scope, signal, slice) =>
      void (await embedConversation({ store, embedder }, scope, signal, slice));
  if (extract !== undefined) handlers.extract = extract;
  const { autoStart, concurrency = 1, ...workerOptions } = options.worker ?? {};
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new MemoryError(
      'invalid_input',
      `worker.concurrency must be an integer from 1 to 64 (got ${String(concurrency)})`,
      {
        details: { field: 'worker.concurrency' },
      },
    );
  }
  const worker = createWorkerLoops(concurrency, (index) =>
    createJobWorker({
      store,
      handlers,
      now,
      ...workerOptions,
      ...(workerOptions.workerId === undefined
        ? {}
        : { workerId: concurrency === 1 ? workerOptions.workerId : `${workerOptions.workerId}-${index}` }),
    }),
  );
  if (Object.keys(handlers).length > 0 && autoStart !== false) worker.start();

  return Object.freeze({
    worker,
    async afterAppend(scope: Scope, callOptions?: CallOptions, appended?: readonly Message[]) {
      let queued = false;
      const embeddedInline =
        embedder?.embedSync !== undefined &&
        appended !== undefined &&
        (await embedAppended({ store, embedder }, scope, appended, callOptions));
      const runAt = new Date(now()).toISOString();
      if (compactor !== undefined) {
        const conversation = await store.getConversation(scope, callOptions);
        if (conversation !== undefined)
          queued = (await compactor.enqueueIfDue(scope, conversation, callOptions)) || queued;
      }
      for (const kind of ['embed', 'extract'] as const) {
        if (handlers[kind] === undefined || (kind === 'embed' && embeddedInline)) continue;
        await store.enqueueJob(scope, { kind, runAt, maxAttempts }, callOptions);
        queued = true;
      }
      if (queued) worker.nudge();
    },
  });
}

/** `count` job loops behind one {@link JobWorker}: started, nudged and stopped together; `drain` runs in the caller. */
function createWorkerLoops(count: number, create: (index: number) => JobWorker): JobWorker {
  const loops = Array.from({ length: count }, (_, index) => create(index));
  if (count === 1) return loops[0]!;
  return Object.freeze({
    workerId: loops[0]!.workerId,
    start: () => loops.forEach((loop) => loop.start()),
    drain: () => loops[0]!.drain(),
    nudge: () => loops.forEach((loop) => loop.nudge()),
    stop: async () => void (await Promise.all(loops.map((loop) => loop.stop()))),
  });
}

import type { Compactor } from '../compaction/create-compactor.js';
import type { JobKind } from './job.js';
import { MemoryError } from '../errors/memory-error.js';
import { createJobWorker, type JobHandler, type JobWorker, type JobWorkerOptions } from './job-worker.js';
import type { Message } from '../messages/message.js';
import type { Scope } from '../messages/scope.js';
import type { Embedder } from '../recall/embedder.js';
import { embedAppended, embedConversation } from './embed-conversation.js';
import { refinerRanksConversation } from '../recall/recall.js';
import type { CallOptions, Store } from '../store/store.js';
import type { JobTimeSlice } from './time-slice.js';

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
  /**
   * A slower, better model whose vectors the `refine` job adds beside the embedder's (decision 0045), on a
   * job loop of its own that leases only while `idle()` says so (default: always) and stops between
   * batches once it says no; `drain()` runs it regardless.
   */
  readonly refiner?: { readonly embedder: Embedder; readonly idle?: () => boolean };
  /** The `extract` job body, when facts/graph extraction is on. */
  readonly extract?: JobHandler;
  /** `concurrency`: job loops in this process (default 1), so one slow job does not hold the others. */
  readonly worker?: Omit<JobWorkerOptions, 'store' | 'handlers' | 'now'> & {
    readonly autoStart?: boolean;
    readonly concurrency?: number;
  };
  readonly now: () => number;
}

/** The attempts of an embed, extract or refine job: they are idempotent and cheap to retry; a few cover a flaky model. */
export const backgroundJobAttempts = 5;

// A refine batch holds the refiner's thread this long at most (16 USE-lite texts: about 0.4 s on a small
// core), so a query that wants the refiner waits, or is told it cannot have it, for no longer.
const refineBatchSize = 16;

/** Wires compaction, embedding and extraction jobs onto one job worker (started unless `autoStart: false`). */
export function createBackgroundWork(options: BackgroundWorkOptions): BackgroundWork {
  const { store, compactor, embedder, refiner, extract, now } = options;
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
  const loops = Array.from({ length: concurrency }, (_, index) =>
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
  // The refine loop: its own, so a long refine backlog never holds compaction, embedding or extraction.
  let draining = false;
  const idle = refiner?.idle ?? (() => true);
  const mayRefine = () => draining || idle();
  const refineLoop =
    refiner === undefined
      ? undefined
      : createJobWorker({
          store,
          handlers: {
            // A chat whose assistant answers at length ranks in the embedder's space: not refined (decision
            // 0047), asked before each batch, as a conversation that started refinable grows.
            refine: async (_job, scope, signal, slice) =>
              void (await embedConversation(
                { store, embedder: refiner.embedder },
                scope,
                signal,
                whileAllowed(slice, mayRefine),
                refineBatchSize,
                () => refinerRanksConversation(store, scope, { signal }),
              )),
          },
          now,
          ...workerOptions,
          mayLease: mayRefine,
          ...(workerOptions.workerId === undefined ? {} : { workerId: `${workerOptions.workerId}-refine` }),
        });
  const worker = groupLoops(loops, refineLoop, (value) => (draining = value));
  if ((Object.keys(handlers).length > 0 || refineLoop !== undefined) && autoStart !== false) worker.start();

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
      for (const kind of ['embed', 'extract', 'refine'] as const) {
        const runs = kind === 'refine' ? refineLoop !== undefined : handlers[kind] !== undefined;
        if (!runs || (kind === 'embed' && embeddedInline)) continue;
        await store.enqueueJob(scope, { kind, runAt, maxAttempts: backgroundJobAttempts }, callOptions);
        queued = true;
      }
      if (queued) worker.nudge();
    },
  });
}

/**
 * The job loops behind one {@link JobWorker}: started, nudged and stopped together. `drain` runs in the
 * caller: the main loop's jobs, then the refine loop's, with `setDraining` true meanwhile so the refine
 * loop does not wait for idle cores.
 */
function groupLoops(
  loops: readonly JobWorker[],
  refineLoop: JobWorker | undefined,
  setDraining: (draining: boolean) => void,
): JobWorker {
  const all = refineLoop === undefined ? loops : [...loops, refineLoop];
  if (all.length === 1) return all[0]!;
  return Object.freeze({
    workerId: loops[0]!.workerId,
    start: () => all.forEach((loop) => loop.start()),
    async drain() {
      const ran = await loops[0]!.drain();
      if (refineLoop === undefined) return ran;
      setDraining(true);
      try {
        return ran + (await refineLoop.drain());
      } finally {
        setDraining(false);
      }
    },
    nudge: () => all.forEach((loop) => loop.nudge()),
    stop: async () => void (await Promise.all(all.map((loop) => loop.stop()))),
  });
}

/** `slice`, saying no more rounds also once `allowed()` says no (the job then queues the rest, as when time runs out). */
function whileAllowed(slice: JobTimeSlice, allowed: () => boolean): JobTimeSlice {
  let stopped = false;
  return {
    deadline: slice.deadline,
    get ranOut() {
      return stopped || slice.ranOut;
    },
    roomForRound() {
      if (!allowed()) {
        stopped = true;
        return false;
      }
      return slice.roomForRound();
    },
  };
}

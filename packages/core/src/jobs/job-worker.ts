import { isMemoryError, MemoryError } from '../errors/memory-error.js';
import type { Scope } from '../messages/scope.js';
import type { Store } from '../store/store.js';
import type { Job, JobKind } from './job.js';
import { nextTurn } from './next-turn.js';
import { createTimeSlice, type JobTimeSlice } from './time-slice.js';

/**
 * Runs one job; throwing fails the attempt (retried with backoff until `maxAttempts`). Returning a
 * `warning` finishes the job degraded (e.g. a summary written by the fallback summarizer): the job is
 * done, the warning is stored as its `lastError` and passed to `onWarning`. A handler that works in
 * rounds asks `slice` before each one and stops when no round fits before the attempt's deadline; the
 * job is then done and a new one of its kind is queued for the rest (see {@link JobTimeSlice}).
 */
export type JobHandler = (
  job: Job,
  scope: Scope,
  signal: AbortSignal,
  slice: JobTimeSlice,
) => Promise<void | { readonly warning?: string }>;

/** Options of {@link createJobWorker}. */
export interface JobWorkerOptions {
  readonly store: Store;
  readonly handlers: Readonly<Partial<Record<JobKind, JobHandler>>>;
  /** Unique per process; default a random id. */
  readonly workerId?: string;
  /** How long a lease lasts; a worker that dies loses its job after this. Default 60,000 ms. */
  readonly leaseMs?: number;
  /** Pause between polls when the queue is empty. Default 250 ms. After a failure of the loop itself (the store cannot lease) it doubles per failure in a row, up to 5 s. */
  readonly pollIntervalMs?: number;
  /**
   * Deadline of one attempt: past it the handler's signal aborts and the attempt fails (`unavailable`) and is
   * retried later, so a hanging model holds a worker loop at most this long. Keep it below `leaseMs`.
   * Default 45,000 ms.
   */
  readonly attemptTimeoutMs?: number;
  /** Backoff before retry n (1-based): `retryBaseMs * 2^(n-1)`, at most 5 minutes. Default 1,000 ms. */
  readonly retryBaseMs?: number;
  /** Called with each failure and each error of the loop itself, so they are visible; default none. */
  readonly onError?: (error: unknown, job?: Job) => void;
  /** Called when a job finished degraded (its handler returned a warning); default none. */
  readonly onWarning?: (warning: string, job: Job) => void;
  readonly now?: () => number;
  /**
   * Whether the started loop may lease a job now, asked before each one (e.g. "the cores are idle"); while
   * it says no, the loop waits a poll interval and asks again. `drain()` does not ask. Default: always.
   */
  readonly mayLease?: () => boolean;
}

/** A background loop that leases jobs from the store and runs them, one at a time. */
export interface JobWorker {
  readonly workerId: string;
  /** Starts polling (idempotent). */
  start(): void;
  /** Runs due jobs until the queue has none; returns how many ran. For tests, CLIs and shutdown. */
  drain(): Promise<number>;
  /** Wakes a started worker now instead of at its next poll (called after a job is queued). */
  nudge(): void;
  /**
   * Stops polling and aborts the running job's signal without waiting for a handler that ignores it; the
   * job's lease then lapses and another worker runs it again.
   */
  stop(): Promise<void>;
}

const maxBackoffMs = 5 * 60_000;
// The loop's own failures (the store cannot lease: disk full, database restarting) back off from the
// poll interval, doubling up to this, so a store that stays down costs a poll every few seconds, not ten a second.
const maxLoopBackoffMs = 5_000;

/**
 * Creates a {@link JobWorker}. Several workers (threads of one process or many processes) may share one
 * store: the store's lease makes each job run in one worker at a time, and a job whose worker died is
 * leased again once its lease expires.
 */
export function createJobWorker(options: JobWorkerOptions): JobWorker {
  const workerId = options.workerId ?? `worker-${crypto.randomUUID()}`;
  const leaseMs = options.leaseMs ?? 60_000;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const retryBaseMs = options.retryBaseMs ?? 1000;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 45_000;
  const now = options.now ?? Date.now;
  const kinds = Object.keys(options.handlers) as JobKind[];
  const stopping = new AbortController();
  let loop: Promise<void> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;

  // An attempt that outlived its lease: another worker holds the job now and its outcome stands. That is
  // said once, as a warning, and the loop goes on; any other store failure is thrown as before.
  const lostLease = async (write: () => Promise<unknown>, job: Job, leaseEndsAt: number): Promise<boolean> => {
    try {
      await untilWritten(write, leaseEndsAt);
      return false;
    } catch (error) {
      if (!isMemoryError(error, 'conflict')) throw error;
      options.onWarning?.(
        `the ${job.kind} job's lease passed to another worker before this attempt ended; its result stands`,
        job,
      );
      return true;
    }
  };

  // The end of an attempt (its result, or its failure) is written again while the store is unavailable
  // (a full disk, a database restarting), backing off, for as long as the lease lasts: the work done is
  // not thrown away, and the job does not sit leased to nobody until the lease lapses.
  const untilWritten = async (write: () => Promise<unknown>, leaseEndsAt: number): Promise<void> => {
    let delayMs = pollIntervalMs;
    for (;;) {
      try {
        await write();
        return;
      } catch (error) {
        if (!isMemoryError(error, 'unavailable') || stopping.signal.aborted || now() + delayMs >= leaseEndsAt)
          throw error;
        options.onError?.(error);
        await new Promise((resolve) => {
          const pause = setTimeout(resolve, delayMs);
          stopping.signal.addEventListener('abort', () => (clearTimeout(pause), resolve(undefined)), { once: true });
        });
        delayMs = Math.min(maxLoopBackoffMs, delayMs * 2);
      }
    }
  };

  const runOne = async (): Promise<boolean> => {
    const leaseEndsAt = now() + leaseMs;
    const job = await options.store.leaseJob({
      workerId,
      leaseMs,
      now: new Date(leaseEndsAt - leaseMs).toISOString(),
      kinds,
    });
    if (job === undefined) return false;
    const scope = { tenantId: job.tenantId, userId: job.userId, conversationId: job.conversationId };
    // One controller per attempt, linked to the worker's stop: a listener on a long-lived signal per job
    // (the openai SDK adds one per call) would pile up for the life of the worker.
    const attempt = new AbortController();
    const onStop = () => attempt.abort(stopping.signal.reason);
    stopping.signal.addEventListener('abort', onStop, { once: true });
    const deadline = setTimeout(
      () =>
        attempt.abort(
          new MemoryError('unavailable', `${job.kind} job attempt passed its ${attemptTimeoutMs} ms deadline`, {
            details: { jobId: job.id, attemptTimeoutMs },
          }),
        ),
      attemptTimeoutMs,
    );
    deadline.unref?.();
    try {
      const handler = options.handlers[job.kind];
      if (handler === undefined) throw new MemoryError('invalid_input', `no handler for job kind ${job.kind}`);
      const slice = createTimeSlice(now() + attemptTimeoutMs, now);
      const warning = (await raceAbort(handler(job, scope, attempt.signal, slice), attempt.signal))?.warning;
      if (warning !== undefined) options.onWarning?.(warning, job);
      // The rest first, then this job's end: a crash between the two leaves this job to run again, not work without a job.
      if (slice.ranOut)
        await options.store.enqueueJob(scope, {
          kind: job.kind,
          runAt: new Date(now()).toISOString(),
          maxAttempts: job.maxAttempts,
        });
      if (
        await lostLease(
          () => options.store.completeJob(job, new Date(now()).toISOString(), warning === undefined ? {} : { warning }),
          job,
          leaseEndsAt,
        )
      )
        return true;
    } catch (error) {
      // A stop is not a failure, and not reported as one: the lease lapses and another worker retries the job.
      if (stopping.signal.aborted) return true;
      const failure: unknown = attempt.signal.aborted ? attempt.signal.reason : error;
      options.onError?.(failure, job);
      const retry = job.attempts < job.maxAttempts && !isMemoryError(failure, 'invalid_input');
      const retryAt = retry
        ? new Date(now() + Math.min(maxBackoffMs, retryBaseMs * 2 ** (job.attempts - 1))).toISOString()
        : undefined;
      const message = failure instanceof Error ? failure.message : String(failure);
      await lostLease(
        () =>
          options.store.failJob(job, {
            error: message,
            now: new Date(now()).toISOString(),
            ...(retryAt === undefined ? {} : { retryAt }),
          }),
        job,
        leaseEndsAt,
      );
    } finally {
      clearTimeout(deadline);
      stopping.signal.removeEventListener('abort', onStop);
    }
    return true;
  };

  const drainWhile = async (allowed: () => boolean): Promise<number> => {
    let count = 0;
    while (!stopping.signal.aborted && allowed() && (await runOne())) {
      count += 1;
      await nextTurn();
    }
    return count;
  };
  const drain = () => drainWhile(() => true);
  const mayLease = options.mayLease ?? (() => true);

  const poll = async (): Promise<void> => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      try {
        await drainWhile(mayLease);
        failures = 0;
      } catch (error) {
        failures += 1;
        options.onError?.(error);
      }
      if (stopping.signal.aborted) break;
      const waitMs = failures === 0 ? pollIntervalMs : Math.min(maxLoopBackoffMs, pollIntervalMs * 2 ** failures);
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, waitMs);
        timer.unref?.();
      });
    }
  };

  return Object.freeze({
    workerId,
    start() {
      loop ??= poll();
    },
    drain,
    nudge() {
      if (timer !== undefined) clearTimeout(timer);
      wake?.();
    },
    async stop() {
      stopping.abort();
      if (timer !== undefined) clearTimeout(timer);
      wake?.();
      await loop;
    },
  });
}

/**
 * Settles with `work`, or rejects with the signal's reason once it aborts: a handler that ignores its
 * signal (a model client stuck in a read) cannot hold the worker loop past the deadline.
 */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

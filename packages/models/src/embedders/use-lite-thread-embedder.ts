import { MemoryError, type Embedder } from '@mnemo/core';
import { Piscina } from 'piscina';
import { orderByLength, UseLiteEmbedder } from './use-lite-embedder.js';

/** Options of {@link UseLiteThreadEmbedder}. */
export interface UseLiteThreadEmbedderOptions {
  /**
   * Texts per forward pass at most; calls waiting together are joined up to this, and a longer call is
   * split into passes of this size (which run side by side on several threads). Default 32.
   */
  readonly maxBatchTexts?: number;
  /**
   * Threads, each with its own copy of the model, running passes side by side: 1 (default) for a
   * server's query embeddings; one per free core for a worker's background embeddings. 1 to 16.
   */
  readonly threads?: number;
  /**
   * The deadline callers put on a call (their `signal` aborts after it), in ms; unset: none. A call with a
   * signal that the recent batches say cannot finish in time (the running batch's rest plus one batch)
   * is not queued: it waits for its signal, as it would have, but the thread does not spend a core on
   * a vector nobody will use. At most once a second one such call runs anyway, to measure again.
   */
  readonly callerDeadlineMs?: number;
  /**
   * One-sentence passes each thread runs in `load()` after its model loaded, so the first calls are as
   * fast as the later ones (see `load`): 0 to 1,000; default 30 with `callerDeadlineMs`, 0 without.
   */
  readonly warmUpPasses?: number;
}

// Weight of the newest batch in the batch-duration estimate.
const estimateWeight = 0.5;
// A thread left idle by refused calls runs one at least this often, so the estimate follows the load down.
const probeIntervalMs = 1000;
// A parked call without the deadline is queued this long after the deadline's time.
const parkMarginMs = 5;
// One-sentence passes each thread of an embedder with a caller deadline runs at load, after the model loaded.
const defaultWarmUpPasses = 30;
// Query-like texts of a few lengths for those passes.
const warmUpTexts = [
  'Where did we move the repeater?',
  'My sister runs the north mast node and checks its battery every morning.',
  'What did I say about the budget for the cloud servers last month, and did we ever change it after the review?',
];

interface Waiting {
  readonly texts: readonly string[];
  readonly resolve: (vectors: Float32Array[]) => void;
  readonly reject: (error: unknown) => void;
  readonly signal?: AbortSignal;
  readonly onAbort: () => void;
}

const taskFile = new URL('./use-lite-thread-task.cjs', import.meta.url).href;

/**
 * The USE-lite {@link Embedder} on worker threads (a piscina pool of `threads`, one by default), for a
 * server's query embeddings and a worker's background embeddings: the forward pass never blocks the
 * event loop, so a caller's deadline can fire while it runs, and the caller's own work (store reads and
 * writes, extraction) goes on beside it. Calls that arrive while every thread runs a batch wait together
 * and go as the next batch (up to `maxBatchTexts` texts), so concurrent queries cost one forward pass
 * instead of one each; a call of more texts is split into passes that free threads run side by side.
 *
 * Same vector space (`model`) as {@link UseLiteEmbedder}: stored vectors written by an in-process one
 * (in `mnemo worker`) answer queries embedded here. A call whose `signal` aborts before its batch starts
 * leaves the queue at once (`model_failed` with `details.aborted`); once started, the batch finishes and
 * the late result is dropped (aborting a running piscina task would kill the thread and its loaded
 * model). `close()` ends the thread.
 */
export class UseLiteThreadEmbedder implements Embedder {
  readonly model = new UseLiteEmbedder().model;
  readonly dimensions = new UseLiteEmbedder().dimensions;
  readonly #pool: Piscina;
  readonly #threads: number;
  readonly #maxBatchTexts: number;
  readonly #waiting: Waiting[] = [];
  readonly #callerDeadlineMs: number | undefined;
  readonly #warmUpPasses: number;
  // Start times (performance.now()) of the batches running now, one per busy thread.
  readonly #runningSince = new Set<number>();
  #lastBatchEnd = 0;
  // Milliseconds a batch took lately (0 until one ran after the warm-up, which loads the model).
  #batchMsEstimate = 0;
  // Batches finished so far, up to the first of each thread (which loads its model).
  #warmedUp = 0;
  #closed = false;

  /**
   * Throws `invalid_input` for a `maxBatchTexts` that is not an integer from 1 to 1,024, `threads` not one
   * from 1 to 16, a `callerDeadlineMs` that is not a positive integer, or `warmUpPasses` not one from 0 to 1,000.
   */
  constructor(options: UseLiteThreadEmbedderOptions = {}) {
    const maxBatchTexts = options.maxBatchTexts ?? 32;
    if (!Number.isInteger(maxBatchTexts) || maxBatchTexts < 1 || maxBatchTexts > 1024) {
      throw new MemoryError(
        'invalid_input',
        `maxBatchTexts must be an integer from 1 to 1024 (got ${String(maxBatchTexts)})`,
        {
          details: { field: 'maxBatchTexts' },
        },
      );
    }
    this.#maxBatchTexts = maxBatchTexts;
    const threads = options.threads ?? 1;
    if (!Number.isInteger(threads) || threads < 1 || threads > 16) {
      throw new MemoryError('invalid_input', `threads must be an integer from 1 to 16 (got ${String(threads)})`, {
        details: { field: 'threads' },
      });
    }
    this.#threads = threads;
    // Every thread at once, and one task per thread: the batches are formed here, where calls can still be joined.
    this.#pool = new Piscina({
      filename: taskFile,
      minThreads: threads,
      maxThreads: threads,
      concurrentTasksPerWorker: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
    });
    const { callerDeadlineMs } = options;
    if (callerDeadlineMs !== undefined && (!Number.isInteger(callerDeadlineMs) || callerDeadlineMs < 1)) {
      throw new MemoryError(
        'invalid_input',
        `callerDeadlineMs must be a positive integer (got ${String(callerDeadlineMs)})`,
        {
          details: { field: 'callerDeadlineMs' },
        },
      );
    }
    this.#callerDeadlineMs = callerDeadlineMs;
    const warmUpPasses = options.warmUpPasses ?? (callerDeadlineMs === undefined ? 0 : defaultWarmUpPasses);
    if (!Number.isInteger(warmUpPasses) || warmUpPasses < 0 || warmUpPasses > 1000) {
      throw new MemoryError(
        'invalid_input',
        `warmUpPasses must be an integer from 0 to 1000 (got ${String(warmUpPasses)})`,
        { details: { field: 'warmUpPasses' } },
      );
    }
    this.#warmUpPasses = warmUpPasses;
  }

  /**
   * Loads the model in every thread now (at startup, so the first request does not wait for it); `model_failed`
   * when it cannot. Each thread then runs `warmUpPasses` one-sentence passes (30 with a caller deadline, ≈ 0.6 s): the
   * model's WebAssembly kernels run slower until V8 has optimized them, and a thread that only embeds
   * queries gets there slowly (measured on 2 cores, one query each 200 ms: the first 10 took 16–53 ms,
   * against 7–23 ms after those passes), so a server's first requests missed a 30 ms deadline. Calls
   * arriving meanwhile queue beside the passes. A `close()` meanwhile ends the load quietly.
   */
  async load(): Promise<void> {
    const warmUp = async () => {
      for (let pass = 0; pass < this.#warmUpPasses && !this.#closed; pass += 1)
        await this.embed([warmUpTexts[pass % warmUpTexts.length]!]);
    };
    try {
      await Promise.all(Array.from({ length: this.#threads }, () => this.embed(['warm up'])));
      await Promise.all(Array.from({ length: this.#threads }, warmUp));
    } catch (error) {
      if (!this.#closed) throw error;
    }
  }

  embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    texts.forEach((text, index) => {
      if (typeof text !== 'string')
        throw new MemoryError('invalid_input', `texts[${index}] must be a string (got ${typeof text})`, {
          details: { field: 'texts', index },
        });
    });
    if (texts.length === 0) return Promise.resolve([]);
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (texts.length > this.#maxBatchTexts) {
      // Passes of similar lengths (each is padded to its longest text), answered in the call's order.
      const order = orderByLength(texts);
      const passes: Promise<Float32Array[]>[] = [];
      for (let start = 0; start < texts.length; start += this.#maxBatchTexts)
        passes.push(
          this.embed(
            order.slice(start, start + this.#maxBatchTexts).map((index) => texts[index]!),
            options,
          ),
        );
      return Promise.all(passes).then((parts) => {
        const vectors = new Array<Float32Array>(texts.length);
        parts.flat().forEach((vector, position) => (vectors[order[position]!] = vector));
        return vectors;
      });
    }
    return new Promise<Float32Array[]>((resolve, reject) => {
      if (signal === undefined || !this.#cannotMakeDeadline()) return this.#enqueue(texts, signal, resolve, reject);
      // Parked: a caller with the deadline gives up when its signal aborts; one without it (its signal
      // aborts for another reason, or never) is queued as usual once the deadline's time has passed.
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortError(signal));
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        this.#enqueue(texts, signal, resolve, reject);
      }, this.#callerDeadlineMs! + parkMarginMs);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #enqueue(
    texts: readonly string[],
    signal: AbortSignal | undefined,
    resolve: (vectors: Float32Array[]) => void,
    reject: (error: unknown) => void,
  ): void {
    if (signal?.aborted) return reject(abortError(signal));
    const entry: Waiting = {
      texts,
      resolve,
      reject,
      ...(signal === undefined ? {} : { signal }),
      onAbort: () => {
        const index = this.#waiting.indexOf(entry);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(abortError(signal!));
      },
    };
    signal?.addEventListener('abort', entry.onAbort, { once: true });
    this.#waiting.push(entry);
    this.#runNext();
  }

  /** Ends the thread; calls still waiting fail with `model_failed`. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const entry of this.#waiting.splice(0)) {
      entry.signal?.removeEventListener('abort', entry.onAbort);
      entry.reject(new MemoryError('model_failed', `${this.model} was closed`));
    }
    await this.#pool.destroy();
  }

  /**
   * The port's immediate "cannot meet the deadline": `false` when a call queued now would, by the recent
   * batches, finish after `timeoutMs` (and no probe is due), so the caller goes keyword-only at once
   * instead of waiting the deadline out.
   */
  canEmbedWithin(timeoutMs: number): boolean {
    return !this.#cannotMakeDeadline(timeoutMs);
  }

  /** True when a call queued now would, by the recent batches, finish after the callers' deadline (and no probe is due). */
  #cannotMakeDeadline(deadlineMs = this.#callerDeadlineMs): boolean {
    if (deadlineMs === undefined || this.#batchMsEstimate === 0) return false;
    const now = performance.now();
    const busy = this.#runningSince.size >= this.#threads;
    // With every thread busy, the call waits for the first of them to finish.
    const rest = busy ? Math.max(0, this.#batchMsEstimate - (now - Math.min(...this.#runningSince))) : 0;
    if (rest + this.#batchMsEstimate <= deadlineMs) return false;
    return busy || this.#waiting.length > 0 || now - this.#lastBatchEnd < probeIntervalMs;
  }

  #runNext(): void {
    while (this.#runningSince.size < this.#threads && this.#waiting.length > 0) this.#runBatch();
  }

  #runBatch(): void {
    const batch = this.#takeBatch();
    // Distinct keys even for two batches started in the same microsecond.
    let startedAt = performance.now();
    while (this.#runningSince.has(startedAt)) startedAt += 1e-6;
    this.#runningSince.add(startedAt);
    const texts = batch.flatMap((entry) => entry.texts);
    this.#pool
      .run(texts)
      .then(
        (vectors: Float32Array[]) => {
          let offset = 0;
          for (const entry of batch) {
            entry.resolve(vectors.slice(offset, offset + entry.texts.length));
            offset += entry.texts.length;
          }
        },
        (error: unknown) => {
          const failure =
            error instanceof MemoryError
              ? error
              : new MemoryError(
                  'model_failed',
                  `${this.model} failed in its thread: ${error instanceof Error ? error.message : String(error)}`,
                  { cause: error },
                );
          for (const entry of batch) entry.reject(failure);
        },
      )
      .finally(() => {
        for (const entry of batch) entry.signal?.removeEventListener('abort', entry.onAbort);
        this.#lastBatchEnd = performance.now();
        const took = this.#lastBatchEnd - startedAt;
        // The first batch of a thread loads its model: it says nothing about the next ones.
        if (this.#warmedUp >= this.#threads)
          this.#batchMsEstimate =
            this.#batchMsEstimate === 0 ? took : estimateWeight * took + (1 - estimateWeight) * this.#batchMsEstimate;
        this.#warmedUp += 1;
        this.#runningSince.delete(startedAt);
        this.#runNext();
      });
  }

  /** The oldest waiting calls whose texts fit one batch (always at least one call, however long). */
  #takeBatch(): Waiting[] {
    const batch: Waiting[] = [];
    let count = 0;
    while (
      this.#waiting.length > 0 &&
      (batch.length === 0 || count + this.#waiting[0]!.texts.length <= this.#maxBatchTexts)
    ) {
      const entry = this.#waiting.shift()!;
      batch.push(entry);
      count += entry.texts.length;
    }
    return batch;
  }
}

function abortError(signal: AbortSignal): MemoryError {
  return new MemoryError('model_failed', 'embedding was aborted', { cause: signal.reason, details: { aborted: true } });
}

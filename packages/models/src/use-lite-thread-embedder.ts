import { MemoryError, type Embedder } from '@mnemo/core';
import { Piscina } from 'piscina';
import { UseLiteEmbedder } from './use-lite-embedder.js';

/** Options of {@link UseLiteThreadEmbedder}. */
export interface UseLiteThreadEmbedderOptions {
  /** Texts per forward pass at most; calls waiting together are joined up to this. Default 32. */
  readonly maxBatchTexts?: number;
  /**
   * The deadline callers put on a call (their `signal` aborts after it), in ms; unset: none. A call with a
   * signal that the recent batches say cannot finish in time (the running batch's rest plus one batch)
   * is not queued: it waits for its signal, as it would have, but the thread does not spend a core on
   * a vector nobody will use. At most once a second one such call runs anyway, to measure again.
   */
  readonly callerDeadlineMs?: number;
}

// Weight of the newest batch in the batch-duration estimate.
const estimateWeight = 0.5;
// A thread left idle by refused calls runs one at least this often, so the estimate follows the load down.
const probeIntervalMs = 1000;
// A parked call without the deadline is queued this long after the deadline's time.
const parkMarginMs = 5;

interface Waiting {
  readonly texts: readonly string[];
  readonly resolve: (vectors: Float32Array[]) => void;
  readonly reject: (error: unknown) => void;
  readonly signal?: AbortSignal;
  readonly onAbort: () => void;
}

const taskFile = new URL('./use-lite-thread-task.js', import.meta.url).href;

/**
 * The USE-lite {@link Embedder} on a worker thread (a one-thread piscina pool), for a server's query
 * embeddings: the forward pass never blocks the event loop, so a caller's deadline can fire while it
 * runs. Calls that arrive while a batch runs wait together and go as the next batch (up to
 * `maxBatchTexts` texts), so concurrent queries cost one forward pass instead of one each.
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
  readonly #pool = new Piscina({ filename: taskFile, minThreads: 1, maxThreads: 1, idleTimeout: Number.POSITIVE_INFINITY });
  readonly #maxBatchTexts: number;
  readonly #waiting: Waiting[] = [];
  readonly #callerDeadlineMs: number | undefined;
  #running = false;
  #runningSince = 0;
  #lastBatchEnd = 0;
  // Milliseconds a batch took lately (0 until one ran after the warm-up, which loads the model).
  #batchMsEstimate = 0;
  #warmedUp = false;

  /** Throws `invalid_input` for a `maxBatchTexts` that is not an integer from 1 to 1,024. */
  constructor(options: UseLiteThreadEmbedderOptions = {}) {
    const maxBatchTexts = options.maxBatchTexts ?? 32;
    if (!Number.isInteger(maxBatchTexts) || maxBatchTexts < 1 || maxBatchTexts > 1024) {
      throw new MemoryError('invalid_input', `maxBatchTexts must be an integer from 1 to 1024 (got ${String(maxBatchTexts)})`, { details: { field: 'maxBatchTexts' } });
    }
    this.#maxBatchTexts = maxBatchTexts;
    const { callerDeadlineMs } = options;
    if (callerDeadlineMs !== undefined && (!Number.isInteger(callerDeadlineMs) || callerDeadlineMs < 1)) {
      throw new MemoryError('invalid_input', `callerDeadlineMs must be a positive integer (got ${String(callerDeadlineMs)})`, { details: { field: 'callerDeadlineMs' } });
    }
    this.#callerDeadlineMs = callerDeadlineMs;
  }

  /** Loads the model in the thread now (at startup, so the first request does not wait for it); `model_failed` when it cannot. */
  async load(): Promise<void> {
    await this.embed(['warm up']);
  }

  embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    texts.forEach((text, index) => {
      if (typeof text !== 'string') throw new MemoryError('invalid_input', `texts[${index}] must be a string (got ${typeof text})`, { details: { field: 'texts', index } });
    });
    if (texts.length === 0) return Promise.resolve([]);
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(abortError(signal));
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

  #enqueue(texts: readonly string[], signal: AbortSignal | undefined, resolve: (vectors: Float32Array[]) => void, reject: (error: unknown) => void): void {
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
    for (const entry of this.#waiting.splice(0)) {
      entry.signal?.removeEventListener('abort', entry.onAbort);
      entry.reject(new MemoryError('model_failed', `${this.model} was closed`));
    }
    await this.#pool.destroy();
  }

  /** True when a call queued now would, by the recent batches, finish after the callers' deadline (and no probe is due). */
  #cannotMakeDeadline(): boolean {
    if (this.#callerDeadlineMs === undefined || this.#batchMsEstimate === 0) return false;
    const now = performance.now();
    const rest = this.#running ? Math.max(0, this.#batchMsEstimate - (now - this.#runningSince)) : 0;
    if (rest + this.#batchMsEstimate <= this.#callerDeadlineMs) return false;
    return this.#running || this.#waiting.length > 0 || now - this.#lastBatchEnd < probeIntervalMs;
  }

  #runNext(): void {
    if (this.#running || this.#waiting.length === 0) return;
    const batch = this.#takeBatch();
    this.#running = true;
    this.#runningSince = performance.now();
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
          const failure = error instanceof MemoryError ? error : new MemoryError('model_failed', `${this.model} failed in its thread: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
          for (const entry of batch) entry.reject(failure);
        },
      )
      .finally(() => {
        for (const entry of batch) entry.signal?.removeEventListener('abort', entry.onAbort);
        this.#lastBatchEnd = performance.now();
        const took = this.#lastBatchEnd - this.#runningSince;
        // The first batch loads the model: it says nothing about the next ones.
        if (this.#warmedUp) this.#batchMsEstimate = this.#batchMsEstimate === 0 ? took : estimateWeight * took + (1 - estimateWeight) * this.#batchMsEstimate;
        this.#warmedUp = true;
        this.#running = false;
        this.#runNext();
      });
  }

  /** The oldest waiting calls whose texts fit one batch (always at least one call, however long). */
  #takeBatch(): Waiting[] {
    const batch: Waiting[] = [];
    let count = 0;
    while (this.#waiting.length > 0 && (batch.length === 0 || count + this.#waiting[0]!.texts.length <= this.#maxBatchTexts)) {
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

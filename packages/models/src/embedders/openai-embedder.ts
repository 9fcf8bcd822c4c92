import { MemoryError, type Embedder } from '@mnemo/core';
import { normalizeVector } from '@mnemo/core/internals';
import OpenAI from 'openai';
import { createOpenAiClient, type OpenAiConnection } from '../chat/create-openai-client.js';
import { toModelError } from '../chat/to-model-error.js';

/** Options of {@link OpenAiEmbedder}. */
export interface OpenAiEmbedderOptions {
  /** Base URL including the version path: `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama), … */
  readonly baseUrl: string;
  /** Sent as a bearer token; omit for local servers that need none. */
  readonly apiKey?: string;
  /** Embedding model sent with every request, e.g. `text-embedding-3-small`, `nomic-embed-text`. */
  readonly model: string;
  /**
   * Length of the vectors. Required unless `model` is one of OpenAI's (`text-embedding-3-small` 1536,
   * `text-embedding-3-large` 3072, `text-embedding-ada-002` 1536). Every response is checked against it.
   */
  readonly dimensions?: number;
  /**
   * Send `dimensions` in the request, asking the model for shortened vectors (OpenAI's text-embedding-3
   * models, and servers that support it). Default: true when `dimensions` differs from the native
   * length of a known model, else false.
   */
  readonly requestDimensions?: boolean;
  /** Texts per request, 1 to 2,048; default 128. */
  readonly batchSize?: number;
  /** Limit of one attempt, in milliseconds; default 60,000. */
  readonly timeoutMs?: number;
  /** Retries (with the SDK's back-off) after a timeout, a connection error, a 408/409/429 or a 5xx; default 2. */
  readonly maxRetries?: number;
  /**
   * The deadline a hybrid context gives a query embedding here when the memory sets none (the
   * `Embedder` port's `queryTimeoutMs`), in ms; default 1,000 (`OpenAiEmbedder.defaultQueryTimeoutMs`).
   */
  readonly queryTimeoutMs?: number;
  /**
   * While the endpoint fails or its last query request took most of the deadline, `canEmbedWithin`
   * refuses at once; one query goes through once it has been this long, in ms, since the last request
   * ended, to see whether it recovered. Default 5,000 (`OpenAiEmbedder.defaultProbeIntervalMs`).
   */
  readonly probeIntervalMs?: number;
}

const nativeDimensions: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};
const defaultBatchSize = 128;
// A query request that took this share of its deadline or more says the next would miss it: a request cut
// off at the deadline ends a little after it or, with timer rounding, a little before.
const deadlineShare = 0.9;
// Statuses that speak of the texts sent, not of the endpoint: they do not make `canEmbedWithin` refuse.
const inputStatuses = new Set([400, 413, 422]);
// OpenAI's limit of inputs per request.
const maxBatchSize = 2048;

/**
 * An {@link Embedder} on any OpenAI-compatible `/embeddings` endpoint (OpenAI, LiteLLM, Ollama, vLLM,
 * llama.cpp server). Texts go `batchSize` to a request, one request at a time; vectors come back in
 * input order (by each item's `index`), scaled to unit length. It asks for `float` encoding, which
 * every compatible server speaks, and also decodes base64 when a server sends it anyway. An empty
 * text is sent as a single space, because OpenAI rejects empty input.
 *
 * `model` is `openai:<model>`, or `openai:<model>@<dimensions>` when shortened vectors are requested,
 * since those are a different vector space.
 *
 * Errors: `unauthorized` for 401/403; `model_failed` (with the SDK error as `cause`) for timeouts,
 * unreachable hosts, error statuses after the retries, a body that is not JSON, an abort (with
 * `details.aborted`), and a response with the wrong number of vectors, wrong or repeated indexes, or
 * vectors that are not `dimensions` finite numbers. The constructor throws `invalid_input`.
 */
export class OpenAiEmbedder implements Embedder {
  /**
   * Default deadline of a query embedding on an endpoint: a one-text request answers in tens (a server on
   * loopback) to hundreds (a provider across the internet) of ms, past the 30 ms a thread beside the
   * process gets, with which every hybrid context of a served endpoint recalled keyword-only (decision
   * 0050); a context for an LLM call of seconds can wait a second for it, and a stalled endpoint still
   * costs at most that.
   */
  static readonly defaultQueryTimeoutMs = 1000;
  /**
   * Default wait between two queries sent to an endpoint that failed or answered too slowly (decision
   * 0051): every context between them recalls keyword-only at once instead of waiting the deadline out.
   */
  static readonly defaultProbeIntervalMs = 5000;
  readonly model: string;
  readonly dimensions: number;
  readonly #connection: OpenAiConnection;
  readonly #batchSize: number;
  readonly #requestDimensions: boolean;
  readonly queryTimeoutMs: number;
  readonly #probeIntervalMs: number;
  /** Whether the last request that ended failed for the endpoint's sake (down, refusing the key, erring); a success clears it. */
  #failing = false;
  /** How long the last one-text request (a query) took, or ran before it was aborted, in ms; and whether it was aborted. */
  #lastQueryMs = 0;
  #lastQueryAborted = false;
  /** When the last request ended (`performance.now()`), and how many are on their way. */
  #lastEnd = -Infinity;
  #inFlight = 0;

  /** Checks the options; throws `invalid_input` naming a bad base URL, model, dimension count, batch size, limit, query deadline or probe interval. */
  constructor(options: OpenAiEmbedderOptions) {
    this.#connection = createOpenAiClient(options, 60_000);
    const native = nativeDimensions[options.model];
    const dimensions = options.dimensions ?? native;
    if (dimensions === undefined) {
      throw new MemoryError(
        'invalid_input',
        `dimensions is required for model ${options.model} (the length of its vectors, e.g. 768 for nomic-embed-text)`,
        {
          details: { field: 'dimensions' },
        },
      );
    }
    if (!Number.isInteger(dimensions) || dimensions < 1)
      invalid('dimensions', `must be a positive integer (got ${String(dimensions)})`);
    const batchSize = options.batchSize ?? defaultBatchSize;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > maxBatchSize) {
      invalid('batchSize', `must be an integer from 1 to ${maxBatchSize} (got ${String(batchSize)})`);
    }
    const queryTimeoutMs = options.queryTimeoutMs ?? OpenAiEmbedder.defaultQueryTimeoutMs;
    if (!Number.isInteger(queryTimeoutMs) || queryTimeoutMs < 1)
      invalid('queryTimeoutMs', `must be a positive integer (got ${String(queryTimeoutMs)})`);
    const probeIntervalMs = options.probeIntervalMs ?? OpenAiEmbedder.defaultProbeIntervalMs;
    if (!Number.isInteger(probeIntervalMs) || probeIntervalMs < 0)
      invalid('probeIntervalMs', `must be a non-negative integer (got ${String(probeIntervalMs)})`);
    this.dimensions = dimensions;
    this.#batchSize = batchSize;
    this.queryTimeoutMs = queryTimeoutMs;
    this.#probeIntervalMs = probeIntervalMs;
    this.#requestDimensions = options.requestDimensions ?? (native !== undefined && native !== dimensions);
    this.model = this.#requestDimensions ? `openai:${options.model}@${dimensions}` : `openai:${options.model}`;
  }

  /** The port's `failing`: the last request that ended failed for the endpoint's sake. */
  get failing(): boolean {
    return this.#failing;
  }

  /**
   * The port's immediate "cannot meet the deadline" (decision 0051): `false` while the last request failed
   * for the endpoint's sake (unreachable, a refused key, a 5xx or 429 after the retries, a garbled answer)
   * or the last query took 90 % of `timeoutMs` or more (it was cut off at its deadline, or nearly),
   * unless no request is on its way and `probeIntervalMs` passed since the last ended: then this query is
   * the probe (sent with one attempt, not the SDK's retries). So a context waits the deadline out at most
   * once a probe interval, not on every request.
   */
  canEmbedWithin(timeoutMs: number): boolean {
    if (!this.#failing && this.#lastQueryMs < deadlineShare * timeoutMs) return true;
    return this.#inFlight === 0 && performance.now() - this.#lastEnd >= this.#probeIntervalMs;
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    texts.forEach((text, index) => {
      if (typeof text !== 'string') {
        throw new MemoryError('invalid_input', `texts[${index}] must be a string (got ${typeof text})`, {
          details: { field: 'texts', index },
        });
      }
    });
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      const batch = texts.slice(start, start + this.#batchSize).map((text) => (text.length === 0 ? ' ' : text));
      vectors.push(...(await this.#embedBatch(batch, options.signal)));
    }
    return vectors;
  }

  async #embedBatch(batch: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const startedAt = performance.now();
    this.#inFlight += 1;
    try {
      const vectors = await this.#request(batch, signal);
      this.#failing = false;
      return vectors;
    } catch (error) {
      // An abort (a deadline, a caller gone) says nothing of the endpoint but how long it had not answered.
      if (signal?.aborted !== true) this.#failing = !inputStatuses.has(statusOf(error));
      throw error;
    } finally {
      this.#inFlight -= 1;
      this.#lastEnd = performance.now();
      if (batch.length === 1) {
        this.#lastQueryMs = this.#lastEnd - startedAt;
        this.#lastQueryAborted = signal?.aborted === true;
      }
    }
  }

  async #request(batch: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const { client } = this.#connection;
    // While the endpoint is in doubt (its last request failed, or its last query was cut off), one attempt:
    // the SDK's retries would only run a probe into its deadline, where an answer or a refusal says more.
    const once = this.#failing || this.#lastQueryAborted;
    const call = once ? { ...this.#connection.call, attempts: 1 } : this.#connection.call;
    let response: unknown;
    try {
      response = await client.embeddings.create(
        {
          model: call.model,
          input: batch,
          encoding_format: 'float',
          ...(this.#requestDimensions ? { dimensions: this.dimensions } : {}),
        },
        { signal, ...(once ? { maxRetries: 0 } : {}) },
      );
    } catch (error) {
      if (signal?.aborted) throw toModelError(new OpenAI.APIUserAbortError(), call);
      throw toModelError(error, call);
    }
    return this.#readVectors(response, batch.length);
  }

  #readVectors(response: unknown, expected: number): Float32Array[] {
    const where = `model ${this.#connection.model} at ${this.#connection.baseUrl}`;
    const fail = (problem: string, details: Record<string, unknown> = {}): never => {
      throw new MemoryError('model_failed', `${where} returned ${problem}`, { details: { expected, ...details } });
    };
    const data = typeof response === 'object' && response !== null ? (response as { data?: unknown }).data : undefined;
    if (!Array.isArray(data)) return fail('something that is not an embeddings list');
    if (data.length !== expected)
      return fail(`${data.length} vectors for ${expected} texts`, { received: data.length });
    const vectors = new Array<Float32Array | undefined>(expected);
    data.forEach((item: unknown, position) => {
      const { index = position, embedding } = (typeof item === 'object' && item !== null ? item : {}) as {
        index?: unknown;
        embedding?: unknown;
      };
      if (
        typeof index !== 'number' ||
        !Number.isInteger(index) ||
        index < 0 ||
        index >= expected ||
        vectors[index] !== undefined
      ) {
        fail(`a wrong or repeated index ${JSON.stringify(index)}`, { index });
      }
      const vector = readEmbedding(embedding);
      if (vector === undefined || vector.length !== this.dimensions || !vector.every(Number.isFinite)) {
        const got = vector === undefined ? 'no numbers' : `${vector.length} values`;
        fail(`a vector of ${got} (want ${this.dimensions} finite numbers)`, { index });
      }
      vectors[index as number] = normalizeVector(vector!);
    });
    return vectors as Float32Array[];
  }
}

/** The HTTP status a failure carries in its details (`toModelError` puts it there), or 0. */
function statusOf(error: unknown): number {
  const status = error instanceof MemoryError ? error.details?.['status'] : undefined;
  return typeof status === 'number' ? status : 0;
}

/** Reads a vector sent as a list of numbers or as base64 little-endian float32; `undefined` for anything else. */
function readEmbedding(embedding: unknown): Float32Array | undefined {
  if (Array.isArray(embedding)) {
    return embedding.every((value) => typeof value === 'number') ? Float32Array.from(embedding) : undefined;
  }
  if (typeof embedding === 'string') {
    const bytes = Buffer.from(embedding, 'base64');
    if (bytes.length % Float32Array.BYTES_PER_ELEMENT !== 0) return undefined;
    // Copy into an aligned buffer: Buffer's pool offset need not be a multiple of 4.
    return new Float32Array(Uint8Array.from(bytes).buffer);
  }
  return undefined;
}

function invalid(field: string, problem: string): never {
  throw new MemoryError('invalid_input', `${field} ${problem}`, { details: { field } });
}

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MemoryError, type Embedder } from '@mnemo/core';
import { decodeStaticModel, type StaticModel } from './static-model-file.js';
import { StaticTokenizer } from './static-tokenizer.js';

/** Options of {@link StaticEmbedder}. */
export interface StaticEmbedderOptions {
  /** A model file written by `npm run build:embedder`; default: the bundled `assets/static-use-lite.bin`, checked against its recorded SHA-256. */
  readonly path?: string;
}

const bundledFile = new URL('../../../assets/static-use-lite.bin', import.meta.url);
const bundledManifest = new URL('../../../assets/static-use-lite.json', import.meta.url);

let bundledModel: StaticModel | undefined;

/**
 * The default offline {@link Embedder}: a static token table distilled from USE-lite (model2vec-style,
 * see `scripts/build-static-embedder.ts` and decision 0032). A text's vector is the sum of its tokens'
 * rows (frequency weights are baked into the rows), scaled to unit length: a table look-up and an add
 * per word, no WASM, no thread; `embedSync` gives the same vectors without a promise, so a request can
 * embed its query and an append its message inline.
 *
 * The table (≈ 1.8 MB) is read on first use and shared by every instance of the process; `model` carries
 * the file's checksum prefix, so another build is another vector space. A text without any known word
 * or piece (empty, or only symbols) gets a fixed unit vector, the same for all such texts.
 *
 * Errors: `invalid_input` for a text that is not a string; `model_failed` when the file is missing,
 * damaged (checksum) or not a model file.
 */
export class StaticEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  readonly #table: StaticModel;
  readonly #tokenizer: StaticTokenizer;
  readonly #blank: Float32Array;

  constructor(options: StaticEmbedderOptions = {}) {
    this.#table = options.path === undefined ? loadBundledModel() : readModel(options.path);
    this.model = this.#table.model;
    this.dimensions = this.#table.dimensions;
    this.#tokenizer = new StaticTokenizer(this.#table.vocabulary);
    this.#blank = new Float32Array(this.dimensions);
    this.#blank[0] = 1;
  }

  /** Facts of the build (teacher, corpus and their licences, settings, held-out agreement with the teacher). */
  get provenance(): Readonly<Record<string, unknown>> {
    return this.#table.provenance;
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    if (options.signal?.aborted)
      throw new MemoryError('model_failed', 'embedding was aborted', {
        cause: options.signal.reason,
        details: { aborted: true },
      });
    return this.embedSync(texts);
  }

  /** Always: a call takes microseconds on the caller's thread. */
  canEmbedWithin(): boolean {
    return true;
  }

  /** As {@link StaticEmbedder.embed}, synchronously. */
  embedSync(texts: readonly string[]): Float32Array[] {
    return texts.map((text, index) => {
      if (typeof text !== 'string')
        throw new MemoryError('invalid_input', `texts[${index}] must be a string (got ${typeof text})`, {
          details: { field: 'texts', index },
        });
      return this.#embedOne(text);
    });
  }

  #embedOne(text: string): Float32Array {
    const rows = this.#tokenizer.rows(text);
    if (rows.length === 0) return Float32Array.from(this.#blank);
    const { values, scales } = this.#table;
    const dimensions = this.dimensions;
    const sum = new Float64Array(dimensions);
    for (const row of rows) {
      const scale = scales[row]!;
      const offset = row * dimensions;
      for (let k = 0; k < dimensions; k += 1) sum[k]! += values[offset + k]! * scale;
    }
    let norm = 0;
    for (let k = 0; k < dimensions; k += 1) norm += sum[k]! * sum[k]!;
    if (norm === 0) return Float32Array.from(this.#blank);
    const inverse = 1 / Math.sqrt(norm);
    const vector = new Float32Array(dimensions);
    for (let k = 0; k < dimensions; k += 1) vector[k] = sum[k]! * inverse;
    return vector;
  }
}

function loadBundledModel(): StaticModel {
  if (bundledModel !== undefined) return bundledModel;
  let manifest: { sha256?: unknown };
  try {
    manifest = JSON.parse(readFileSync(bundledManifest, 'utf8')) as { sha256?: unknown };
  } catch (error) {
    throw new MemoryError(
      'model_failed',
      `cannot read the static embedder's manifest ${fileURLToPath(bundledManifest)}`,
      { cause: error },
    );
  }
  bundledModel = readModel(
    fileURLToPath(bundledFile),
    typeof manifest.sha256 === 'string' ? manifest.sha256 : undefined,
  );
  return bundledModel;
}

function readModel(path: string, expectedSha256?: string): StaticModel {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new MemoryError('model_failed', `cannot read the static embedder file ${path}`, { cause: error });
  }
  return decodeStaticModel(bytes, expectedSha256 === undefined ? {} : { expectedSha256 });
}

import { readFile, rename, writeFile } from 'node:fs/promises';
import type { Embedder } from '@mnemo/core';

/**
 * An {@link Embedder} that remembers every text it embedded (same `model`, same vectors), so a benchmark
 * that stores one conversation several times, or asks one question under several policies, runs the
 * model once per distinct text. `calls` and `embeddedTexts` count the work the wrapped model did.
 */
export class CachingEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  readonly #inner: Embedder;
  readonly #vectors = new Map<string, Float32Array>();
  #embeddedTexts = 0;
  #embedMs = 0;

  constructor(inner: Embedder) {
    this.#inner = inner;
    this.model = inner.model;
    this.dimensions = inner.dimensions;
  }

  /** Distinct texts the wrapped embedder was asked for. */
  get embeddedTexts(): number {
    return this.#embeddedTexts;
  }

  /** Wall-clock milliseconds spent in the wrapped embedder. */
  get embedMs(): number {
    return this.#embedMs;
  }

  /**
   * Loads the vectors a previous run saved to `path` (see {@link save}); a missing file loads nothing, a
   * file of another model or dimension is ignored. Returns the vectors loaded.
   */
  async load(path: string): Promise<number> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    const saved = JSON.parse(text) as { model?: string; dimensions?: number; vectors?: [string, string][] };
    if (saved.model !== this.model || saved.dimensions !== this.dimensions || !Array.isArray(saved.vectors)) return 0;
    for (const [key, encoded] of saved.vectors) {
      const bytes = Buffer.from(encoded, 'base64');
      this.#vectors.set(
        key,
        new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)),
      );
    }
    return saved.vectors.length;
  }

  /** Writes every vector it holds to `path` (JSON, vectors as base64 float32), replacing the file whole. */
  async save(path: string): Promise<void> {
    const vectors = [...this.#vectors].map(([key, vector]) => [
      key,
      Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64'),
    ]);
    await writeFile(`${path}.tmp`, JSON.stringify({ model: this.model, dimensions: this.dimensions, vectors }));
    await rename(`${path}.tmp`, path);
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((text) => !this.#vectors.has(text)))];
    if (missing.length > 0) {
      const started = performance.now();
      const vectors = await this.#inner.embed(missing, options);
      this.#embedMs += performance.now() - started;
      this.#embeddedTexts += missing.length;
      missing.forEach((text, index) => this.#vectors.set(text, vectors[index]!));
    }
    // Stores may keep the array they get; hand out copies so the cache stays intact.
    return texts.map((text) => Float32Array.from(this.#vectors.get(text)!));
  }
}

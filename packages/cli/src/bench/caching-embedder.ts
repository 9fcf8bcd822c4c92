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

import type { Embedder } from './embedder.js';
import { normalizeVector } from './embedder.js';

/**
 * A bag-of-words embedder: each lower-cased word (and word bigram) is hashed into one of `dimensions`
 * buckets with a sign. Deterministic, instant and offline: for unit tests and scale benchmarks, where
 * what matters is that similar texts get similar vectors, not semantic quality.
 */
export class HashedEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;

  constructor(options: { dimensions?: number } = {}) {
    this.dimensions = options.dimensions ?? 256;
    this.model = `hashed-bow-${this.dimensions}`;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => this.#embedOne(text));
  }

  #embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    const features = [...words, ...words.slice(1).map((word, index) => `${words[index]} ${word}`)];
    for (const feature of features) {
      const hash = fnv1a(feature);
      vector[hash % this.dimensions] = vector[hash % this.dimensions]! + (hash >>> 31 === 0 ? 1 : -1);
    }
    return normalizeVector(vector);
  }
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

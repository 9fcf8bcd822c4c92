/**
 * Turns texts into vectors. `model` names the model (and so the vector space): vectors of different
 * models are never compared, and stored vectors carry it so a change of model is detected.
 */
export interface Embedder {
  readonly model: string;
  readonly dimensions: number;
  /** Embeds a batch; returns one unit-length vector per text, in order. Failures are `model_failed`. */
  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<Float32Array[]>;
  /**
   * Present on embedders that compute on the caller's thread in microseconds (a static token table): the
   * same vectors as `embed`, synchronously. The engine then embeds a message as it is appended and a query
   * without a deadline, instead of queueing a job or racing a timer.
   */
  embedSync?(texts: readonly string[]): Float32Array[];
  /**
   * Whether a call made now can answer within `timeoutMs`, by what the embedder knows (its queue, its
   * recent passes, whether its model is loaded). `false` is the immediate "cannot meet the deadline":
   * recall goes keyword-only at once instead of waiting the deadline out. Absent: assumed `true`.
   */
  canEmbedWithin?(timeoutMs: number): boolean;
  /**
   * True while the embedder's last call failed (an endpoint down or refusing its key): a query that
   * `canEmbedWithin` refuses then counts as `embedder_failed`, not `embedding_deadline`. Absent: false.
   */
  readonly failing?: boolean;
  /**
   * The deadline, in ms, a hybrid context gives this embedder's query embedding when the memory sets
   * none (`queryEmbeddingTimeoutMs`): an endpoint across the network needs more than a model on a thread
   * beside the process. Absent: `defaultQueryEmbeddingTimeoutMs` (30 ms).
   */
  readonly queryTimeoutMs?: number;
}

/** Cosine similarity of two vectors of the same length (1 = same direction); 0 when either is all zeros. */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let index = 0; index < a.length; index += 1) {
    const x = a[index]!;
    const y = b[index]!;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}

/** Scales a vector to unit length in place and returns it (all zeros stay zeros). */
export function normalizeVector(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  if (norm === 0) return vector;
  const scale = 1 / Math.sqrt(norm);
  for (let index = 0; index < vector.length; index += 1) vector[index] = vector[index]! * scale;
  return vector;
}

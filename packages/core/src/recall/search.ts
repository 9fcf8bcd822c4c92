import type { Message } from '../messages/message.js';

/** Which of a user's messages a search may return. */
export interface SearchOptions {
  /** Hits to return, 1–1000. */
  readonly k: number;
  /** Only these conversations of the user; default all. */
  readonly conversationIds?: readonly string[];
  /** Only messages said at or after this ISO 8601 time. */
  readonly since?: string;
  /** Only messages said before this ISO 8601 time. */
  readonly until?: string;
}

/** One message found by a search, best first. */
export interface SearchHit {
  readonly conversationId: string;
  readonly message: Message;
  /** Keyword search: BM25 relevance (higher is better). Vector search: cosine similarity. */
  readonly score: number;
}

/** How many stored vectors one model made (`SearchPort.countEmbeddings`). */
export interface EmbeddingCount {
  readonly model: string;
  readonly vectors: number;
}

/** Counts per model (a model may come more than once: summed), most vectors first, then by model; none of 0. */
export function embeddingCounts(counts: Iterable<EmbeddingCount>): EmbeddingCount[] {
  const byModel = new Map<string, number>();
  for (const { model, vectors } of counts) byModel.set(model, (byModel.get(model) ?? 0) + vectors);
  return [...byModel]
    .filter(([, vectors]) => vectors > 0)
    .map(([model, vectors]) => ({ model, vectors }))
    .sort((x, y) => y.vectors - x.vectors || (x.model < y.model ? -1 : x.model > y.model ? 1 : 0));
}

/** A message's vector, stored with the model that made it. */
export interface MessageEmbedding {
  readonly seq: number;
  readonly vector: Float32Array;
}

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

/** A message's vector, stored with the model that made it. */
export interface MessageEmbedding {
  readonly seq: number;
  readonly vector: Float32Array;
}

import type { Message } from '../messages/message.js';
import type { Scope, UserScope } from '../messages/scope.js';
import type { PortCalls } from '../store/port.js';
import type { CallOptions } from '../store/store.js';
import type { EmbeddingCount, MessageEmbedding, SearchHit, SearchOptions } from './search.js';

/** Vectors and keyword search. Part of the `Store` port; an adapter implements it as a `StorePart<SearchPort>`. */
export interface SearchPort {
  /** Stores (or replaces) vectors of messages of one conversation, made by `model`. */
  upsertEmbeddings(
    scope: Scope,
    model: string,
    embeddings: readonly MessageEmbedding[],
    options?: CallOptions,
  ): Promise<void>;
  /** Messages of a conversation with no vector of `model` yet, oldest first, at most `limit`. */
  listUnembeddedMessages(scope: Scope, model: string, limit: number, options?: CallOptions): Promise<Message[]>;
  /**
   * Of a conversation's newest `among` messages (by seq), those with no vector of `model`, oldest first, at
   * most `limit`: a read bounded by `among` however long the conversation (recall's refiner gap check).
   */
  listUnembeddedNewest(
    scope: Scope,
    model: string,
    among: number,
    limit: number,
    options?: CallOptions,
  ): Promise<Message[]>;
  /** Deletes a tenant's (or one user's) vectors of every model but those of `exceptModels` (all without it); returns how many. */
  deleteEmbeddings(
    filter: { tenantId: string; userId?: string; exceptModels?: readonly string[] },
    options?: CallOptions,
  ): Promise<number>;
  /**
   * How many vectors each model has stored, in one tenant or (without `tenantId`) the whole store, most
   * first: so a server can say when its embedder is not the one the store's vectors were made with.
   */
  countEmbeddings(filter: { tenantId?: string }, options?: CallOptions): Promise<EmbeddingCount[]>;
  /**
   * Keyword search over one user's messages: any of `terms` (from `keywordTerms`), ranked by BM25 with
   * the adapter's stemming; ties by newest first. Scores are higher-is-better.
   */
  searchKeyword(
    user: UserScope,
    terms: readonly string[],
    options: SearchOptions,
    callOptions?: CallOptions,
  ): Promise<SearchHit[]>;
  /** Nearest messages of one user to `vector` among vectors of `model`, by cosine similarity (best first). */
  searchVector(
    user: UserScope,
    model: string,
    vector: Float32Array,
    options: SearchOptions,
    callOptions?: CallOptions,
  ): Promise<SearchHit[]>;
}

/** What each method of {@link SearchPort} does, in the words of an error, and the index of its call options. */
export const searchPortCalls: PortCalls<SearchPort> = {
  upsertEmbeddings: ['storing vectors', 3],
  listUnembeddedMessages: ['listing messages without vectors', 3],
  listUnembeddedNewest: ['listing the newest messages without vectors', 4],
  deleteEmbeddings: ['deleting vectors', 1],
  countEmbeddings: ['counting vectors', 1],
  searchKeyword: ['searching by keyword', 3],
  searchVector: ['searching by vector', 4],
};

import { MemoryError } from '../errors/memory-error.js';
import type { Message } from '../messages/message.js';
import type { UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import type { Embedder } from './embedder.js';
import { keywordTerms } from './keyword-terms.js';
import type { SearchHit } from './search.js';

/** Options of {@link recall}. */
export interface RecallOptions extends CallOptions {
  /** Hits to return, 1–200; default 10. */
  readonly k?: number;
  /** Only these conversations of the user; default all of them. */
  readonly conversations?: readonly string[];
  /** ISO 8601 bounds on when the message was said (`since` inclusive, `until` exclusive). */
  readonly since?: string;
  readonly until?: string;
  /** Messages before and after each hit to attach as context (0–5); default 0. */
  readonly neighbours?: number;
  /** Candidates each retriever contributes before fusion; default max(50, 5·k). */
  readonly candidates?: number;
  /** Leave out messages of this conversation from `fromSeq` on (the turns a context already holds). */
  readonly exclude?: { readonly conversationId: string; readonly fromSeq: number };
}

/** Why a hit ranks where it does: each retriever's rank and score, recency and the fused score. */
export interface RecallExplanation {
  /** 1-based rank in the keyword (BM25) list, when it was there. */
  readonly keywordRank?: number;
  readonly keywordScore?: number;
  /** 1-based rank in the vector list, when it was there. */
  readonly vectorRank?: number;
  readonly vectorSimilarity?: number;
  /** 0 (oldest candidate) … 1 (newest): breaks ties between equal fused scores. */
  readonly recency: number;
  /** Reciprocal rank fusion: Σ 1 / (60 + rank) over the lists the hit is in. */
  readonly fused: number;
}

/** A recalled message, where it came from, its neighbours and why it ranks there. */
export interface RecallHit {
  readonly conversationId: string;
  readonly message: Message;
  readonly score: number;
  readonly explain: RecallExplanation;
  /** Messages around the hit (oldest first), when `neighbours` was asked for. */
  readonly neighbours?: readonly Message[];
}

/** What {@link recall} searches with. Without an embedder, recall is keyword-only. */
export interface RecallDependencies {
  readonly store: Store;
  readonly embedder?: Embedder;
}

// The constant of reciprocal rank fusion (Cormack et al. 2009): damps the head so that agreement
// between retrievers outweighs one retriever's top rank.
const rrfConstant = 60;
const maxK = 200;

/**
 * Finds the few past messages of a user that a query needs: BM25 keyword search and vector search,
 * fused by reciprocal rank, recency as the tie-breaker. Throws `invalid_input` for a blank query or a
 * bad option; a failing embedder (`model_failed`) is not hidden — the caller sees it.
 */
export async function recall(dependencies: RecallDependencies, user: UserScope, query: string, options: RecallOptions = {}): Promise<RecallHit[]> {
  const k = options.k ?? 10;
  if (!Number.isInteger(k) || k < 1 || k > maxK) throw new MemoryError('invalid_input', `k must be an integer from 1 to ${maxK}`, { details: { field: 'k' } });
  if (typeof query !== 'string' || query.trim().length === 0) throw new MemoryError('invalid_input', 'query must be a non-empty string', { details: { field: 'query' } });
  const neighbours = options.neighbours ?? 0;
  if (!Number.isInteger(neighbours) || neighbours < 0 || neighbours > 5) {
    throw new MemoryError('invalid_input', 'neighbours must be an integer from 0 to 5', { details: { field: 'neighbours' } });
  }
  const pool = Math.min(1000, options.candidates ?? Math.max(50, 5 * k));
  const search = {
    k: pool,
    ...(options.conversations === undefined ? {} : { conversationIds: options.conversations }),
    ...(options.since === undefined ? {} : { since: options.since }),
    ...(options.until === undefined ? {} : { until: options.until }),
  };
  const callOptions = options.signal === undefined ? {} : { signal: options.signal };
  const { store, embedder } = dependencies;
  const [keyword, vector] = await Promise.all([
    store.searchKeyword(user, keywordTerms(query), search, callOptions),
    embedder === undefined
      ? Promise.resolve<SearchHit[]>([])
      : embedder.embed([query], callOptions).then(([queryVector]) => store.searchVector(user, embedder.model, queryVector!, search, callOptions)),
  ]);
  const excluded = (hit: SearchHit) =>
    options.exclude !== undefined && hit.conversationId === options.exclude.conversationId && hit.message.seq >= options.exclude.fromSeq;
  const fused = fuse(keyword.filter((hit) => !excluded(hit)), vector.filter((hit) => !excluded(hit))).slice(0, k);
  if (neighbours === 0) return fused;
  return Promise.all(
    fused.map(async (hit) => {
      const scope = { ...user, conversationId: hit.conversationId };
      const around = await store.listMessages(scope, { afterSeq: hit.message.seq - neighbours - 1, beforeSeq: hit.message.seq + neighbours + 1 }, callOptions);
      return { ...hit, neighbours: around.filter((message) => message.seq !== hit.message.seq) };
    }),
  );
}

/** Reciprocal rank fusion of the two lists (best first), recency breaking ties. */
export function fuse(keyword: readonly SearchHit[], vector: readonly SearchHit[]): RecallHit[] {
  const byMessage = new Map<string, { hit: SearchHit; keywordRank?: number; keywordScore?: number; vectorRank?: number; vectorSimilarity?: number }>();
  const keyOf = (hit: SearchHit) => `${hit.conversationId}\u0000${hit.message.seq}`;
  keyword.forEach((hit, index) => byMessage.set(keyOf(hit), { hit, keywordRank: index + 1, keywordScore: hit.score }));
  vector.forEach((hit, index) => {
    const entry = byMessage.get(keyOf(hit));
    if (entry === undefined) byMessage.set(keyOf(hit), { hit, vectorRank: index + 1, vectorSimilarity: hit.score });
    else Object.assign(entry, { vectorRank: index + 1, vectorSimilarity: hit.score });
  });
  const times = [...byMessage.values()].map((entry) => Date.parse(entry.hit.message.createdAt));
  const oldest = Math.min(...times);
  const span = Math.max(1, Math.max(...times) - oldest);
  const hits = [...byMessage.values()].map((entry): RecallHit => {
    const fused = (entry.keywordRank === undefined ? 0 : 1 / (rrfConstant + entry.keywordRank)) + (entry.vectorRank === undefined ? 0 : 1 / (rrfConstant + entry.vectorRank));
    const recency = (Date.parse(entry.hit.message.createdAt) - oldest) / span;
    const { hit, ...ranks } = entry;
    return { conversationId: hit.conversationId, message: hit.message, score: fused, explain: { ...ranks, recency, fused } };
  });
  return hits.sort((a, b) => b.score - a.score || b.explain.recency - a.explain.recency || b.message.seq - a.message.seq);
}

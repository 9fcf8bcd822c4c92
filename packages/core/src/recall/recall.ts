import { MemoryError } from '../errors/memory-error.js';
import type { Message } from '../messages/message.js';
import type { UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import type { Embedder } from './embedder.js';
import { keywordTerms } from './keyword-terms.js';
import type { SearchHit } from './search.js';
import { speakerTerms, spokenBy } from './speaker-terms.js';

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
  /** 0 (oldest candidate) … 1 (newest): breaks ties between equal scores. */
  readonly recency: number;
  /** Reciprocal rank fusion: Σ 1 / (c + rank) over the lists the hit is in (c = 10 in `recall`, 60 in `fuse` by default). */
  readonly fused: number;
  /** True when the query names the message's speaker: the fused score was raised by {@link recallTuning}`.speakerBoost`. */
  readonly speaker?: boolean;
  /** Score carried over from the best adjacent message of the same conversation ({@link recallTuning}`.neighbourShare` of its score). */
  readonly neighbour?: number;
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
  /**
   * Deadline of the query embedding, in ms: past it the query's embedding is abandoned (its signal
   * aborts) and recall goes on keyword-only, as {@link RecallSearch} says. Default none: wait for it.
   */
  readonly queryEmbeddingTimeoutMs?: number;
}

/** How {@link searchRecall} searched: keyword and vector search, or keyword only and why. */
export interface RecallSearch {
  readonly hits: RecallHit[];
  /** `hybrid`: keyword and vector search fused; `keyword-only`: see `reason`. */
  readonly mode: 'hybrid' | 'keyword-only';
  /** `no_embedder`: none configured; `embedding_deadline`: the query embedding missed `queryEmbeddingTimeoutMs`. */
  readonly reason?: 'no_embedder' | 'embedding_deadline';
}

/**
 * How `recall` weighs its evidence; tuned on LoCoMo's turn-level evidence ranking (frac@k), see
 * `packages/cli/src/bench/README.md`. The gains hold over a broad plateau around these values.
 */
export const recallTuning = Object.freeze({
  /**
   * The constant c of reciprocal rank fusion, Σ 1 / (c + rank). The classic 60 (Cormack et al. 2009)
   * flattens the head so much that a weak retriever's top hits tie with a strong one's; 10 keeps the
   * head's order while still rewarding agreement.
   */
  rrfConstant: 10,
  /** Fused score × (1 + this) for a message said by a speaker the query names ("What did Caroline …?"). */
  speakerBoost: 0.3,
  /**
   * A candidate also gets this share of its best adjacent candidate's score (same conversation, seq ± 1):
   * an answer sits next to its question ("How was the trip?" / "Amazing, we saw dolphins").
   */
  neighbourShare: 0.2,
});

const maxK = 200;

/**
 * Finds the few past messages of a user that a query needs: BM25 keyword search and vector search,
 * fused by reciprocal rank; a query word that names a speaker is matched against who said a message
 * instead of its text; each message then gets a share of its best neighbour's score; recency breaks
 * ties. Throws `invalid_input` for a blank query or a bad option; a failing embedder (`model_failed`) is
 * not hidden — the caller sees it.
 */
export async function recall(dependencies: RecallDependencies, user: UserScope, query: string, options: RecallOptions = {}): Promise<RecallHit[]> {
  return (await searchRecall(dependencies, user, query, options)).hits;
}

/** {@link recall}, saying also whether vector search took part (the context report shows it). */
export async function searchRecall(dependencies: RecallDependencies, user: UserScope, query: string, options: RecallOptions = {}): Promise<RecallSearch> {
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
  const terms = keywordTerms(query);
  // Vector search first: its hits name the speakers, so the keyword search can leave speaker names out
  // of the text query in one go (both stores answer in-process, so running them one after the other
  // costs nothing). Without vectors, a first keyword search supplies the names, and a second one runs
  // only when the query names a speaker.
  const queryVector = embedder === undefined ? undefined : await embedQuery(embedder, query, dependencies.queryEmbeddingTimeoutMs, options.signal);
  const vector = embedder === undefined || queryVector === undefined ? [] : await store.searchVector(user, embedder.model, queryVector, search, callOptions);
  const mode = embedder !== undefined && queryVector !== undefined ? ('hybrid' as const) : ('keyword-only' as const);
  const searched = { mode, ...(mode === 'hybrid' ? {} : { reason: embedder === undefined ? ('no_embedder' as const) : ('embedding_deadline' as const) }) };
  const byAllTerms = vector.length === 0 ? await store.searchKeyword(user, terms, search, callOptions) : undefined;
  const speakers = speakerTerms(terms, byAllTerms ?? vector);
  const topicTerms = terms.filter((term) => !speakers.has(term));
  const searchTerms = speakers.size > 0 && topicTerms.length > 0 ? topicTerms : terms;
  const keyword = byAllTerms !== undefined && searchTerms === terms ? byAllTerms : await store.searchKeyword(user, searchTerms, search, callOptions);
  const excluded = (conversationId: string, seq: number) =>
    options.exclude !== undefined && conversationId === options.exclude.conversationId && seq >= options.exclude.fromSeq;
  const fused = fuse(
    keyword.filter((hit) => !excluded(hit.conversationId, hit.message.seq)),
    vector.filter((hit) => !excluded(hit.conversationId, hit.message.seq)),
    { rrfConstant: recallTuning.rrfConstant },
  );
  const ranked = rerank(fused, speakers).slice(0, k);
  if (neighbours === 0) return { hits: ranked, ...searched };
  const hits = await Promise.all(
    ranked.map(async (hit) => {
      const scope = { ...user, conversationId: hit.conversationId };
      const around = await store.listMessages(scope, { afterSeq: hit.message.seq - neighbours - 1, beforeSeq: hit.message.seq + neighbours + 1 }, callOptions);
      return { ...hit, neighbours: around.filter((message) => message.seq !== hit.message.seq) };
    }),
  );
  return { hits, ...searched };
}

/**
 * The query's vector, or `undefined` when it missed its deadline. The embedding's own signal aborts at
 * the deadline (or with the caller's), so an embedder that queues work can drop it instead of doing it
 * for nobody. A caller's abort and an embedder failure are thrown, not hidden.
 */
async function embedQuery(embedder: Embedder, query: string, timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<Float32Array | undefined> {
  if (timeoutMs === undefined) return (await embedder.embed([query], signal === undefined ? {} : { signal }))[0];
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const missed = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new MemoryError('unavailable', `query embedding passed its ${timeoutMs} ms deadline`));
      resolve(undefined);
    }, timeoutMs);
  });
  try {
    const embedded = embedder.embed([query], { signal: controller.signal }).then(([vector]) => vector);
    // Once the deadline passed, a late rejection (the abort) is nobody's error.
    embedded.catch(() => undefined);
    return await Promise.race([embedded, missed]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Options of {@link fuse}. */
export interface FuseOptions {
  /** The constant c in Σ 1 / (c + rank); default 60 (Cormack et al. 2009). `recall` uses {@link recallTuning}. */
  readonly rrfConstant?: number;
}

/** Reciprocal rank fusion of the two lists (best first), recency breaking ties. */
export function fuse(keyword: readonly SearchHit[], vector: readonly SearchHit[], options: FuseOptions = {}): RecallHit[] {
  const rrfConstant = options.rrfConstant ?? 60;
  const byMessage = new Map<string, { hit: SearchHit; keywordRank?: number; keywordScore?: number; vectorRank?: number; vectorSimilarity?: number }>();
  keyword.forEach((hit, index) => byMessage.set(keyOf(hit.conversationId, hit.message.seq), { hit, keywordRank: index + 1, keywordScore: hit.score }));
  vector.forEach((hit, index) => {
    const entry = byMessage.get(keyOf(hit.conversationId, hit.message.seq));
    if (entry === undefined) byMessage.set(keyOf(hit.conversationId, hit.message.seq), { hit, vectorRank: index + 1, vectorSimilarity: hit.score });
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
  return hits.sort(byScore);
}

/**
 * The speaker boost and the neighbour share on top of the fused scores, best first. Only candidates get a
 * share: a neighbour in neither list stays out (on LoCoMo, adding such neighbours changed nothing).
 */
function rerank(fused: readonly RecallHit[], speakers: ReadonlySet<string>): RecallHit[] {
  const base = new Map(fused.map((hit) => [keyOf(hit.conversationId, hit.message.seq), hit.explain.fused * (spokenBy(hit.message, speakers) ? 1 + recallTuning.speakerBoost : 1)]));
  return fused
    .map((hit): RecallHit => {
      const own = base.get(keyOf(hit.conversationId, hit.message.seq))!;
      const adjacent = Math.max(base.get(keyOf(hit.conversationId, hit.message.seq - 1)) ?? 0, base.get(keyOf(hit.conversationId, hit.message.seq + 1)) ?? 0);
      const neighbour = recallTuning.neighbourShare * adjacent;
      const explain = { ...hit.explain, ...(own !== hit.explain.fused ? { speaker: true } : {}), ...(neighbour > 0 ? { neighbour } : {}) };
      return { ...hit, score: own + neighbour, explain };
    })
    .sort(byScore);
}

function keyOf(conversationId: string, seq: number): string {
  return `${conversationId}\u0000${seq}`;
}

function byScore(a: RecallHit, b: RecallHit): number {
  return b.score - a.score || b.explain.recency - a.explain.recency || b.message.seq - a.message.seq;
}

import { MemoryError } from '../errors/memory-error.js';
import type { Fact } from '../facts/fact.js';
import type { Scope, UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import type { Embedder } from './embedder.js';
import { keywordTerms } from './keyword-terms.js';
import { asksForList } from './list-questions.js';
import { findQueryPeriods } from './query-periods.js';
import {
  candidatesReplyRatio,
  chatReplyRatio,
  checkRecallTuning,
  messagesReplyRatio,
  rankRecallCandidates,
  refinerAlways,
  vectorSpaceOf,
  type RecallCandidates,
  type RecallTuning,
} from './rank-recall-candidates.js';
import type { RecallHit } from './recall-hit.js';
import type { SearchHit, SearchOptions } from './search.js';
import { secondHopTerms } from './second-hop-terms.js';
import { speakerTerms } from './speaker-terms.js';

export { fuse, type FuseOptions } from './rank-recall-candidates.js';
export type { RecallExplanation, RecallHit } from './recall-hit.js';

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
  /** Other weights than {@link recallTuning} (for evaluation); missing fields take the defaults. Throws `invalid_input` out of range. */
  readonly tuning?: Partial<RecallTuning>;
  /** Run the second-hop search even when the tuning's `secondHopWeight` is 0 (a benchmark that sweeps the weight); default false. */
  readonly secondHop?: boolean;
  /** Read which candidates stated a current fact even when the tuning's `importanceBoost` is 0 (a benchmark that sweeps it); default false. */
  readonly importance?: boolean;
  /** The user's facts when the caller has read them already (the context builder has): the importance boost uses their current ones instead of reading them again. */
  readonly facts?: readonly Fact[];
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
  /**
   * Where given, a query embedding that fails (an endpoint down or rejecting its key, a model thread that
   * died) does not fail the recall: the embedder's failure makes it keyword-only (`embedder_failed`), the
   * refiner's ranks in the embedder's space, and the error is handed here. Absent: the error is thrown.
   * A caller's abort is thrown either way.
   */
  readonly onQueryEmbeddingError?: (error: unknown) => void;
  /**
   * A slower, better model whose vectors a background job adds where cores are idle (decision 0045):
   * the vector search ranks in its space when it can embed the query within the deadline and the
   * conversations the `embedder`'s hits come from lack at most {@link refinerGapLimit} of its vectors
   * among their newest {@link refinerGapWindow} messages (those few keep their `embedder` rank); otherwise
   * in the `embedder`'s space as without it.
   */
  readonly refiner?: Embedder;
}

/** Messages of one conversation without the refiner's vector that a refined vector search still ranks (by the embedder's rank); more, and it ranks in the embedder's space. */
export const refinerGapLimit = 64;

/**
 * The newest messages of a conversation whose refined vectors recall's gap check counts: the `refine` job
 * embeds oldest first, so a conversation whose newest this many are refined is refined before them too,
 * and the check reads this many rows however long the conversation (not all 100,000 of a long one).
 */
export const refinerGapWindow = 1024;

/** The newest messages of a conversation that {@link refinerRanksConversation} reads. */
export const refinerChatWindow = 200;

/**
 * Whether the refiner's space can rank a conversation, so its refine job is worth its CPU (decision
 * 0047): false where its newest {@link refinerChatWindow} messages show an assistant answering at length,
 * replies at least twice `recallTuning.refinerChatRatio` times as long as the user's turns (the margin
 * keeps a conversation near the line refined). Such a chat ranks in the embedder's space (decision 0045,
 * item 7); where a question's candidates say otherwise, its hits keep the embedder's ranks within the
 * refined list, and the same user's refined conversations rank in the refiner's space beside it (decision 0049).
 */
export async function refinerRanksConversation(
  store: Pick<Store, 'listMessages'>,
  scope: Scope,
  options: CallOptions = {},
): Promise<boolean> {
  if (recallTuning.refinerChatRatio >= refinerAlways) return true;
  const newest = await store.listMessages(scope, { order: 'desc', limit: refinerChatWindow }, options);
  return messagesReplyRatio(newest) < 2 * recallTuning.refinerChatRatio;
}

/** How {@link searchRecall} searched: keyword and vector search, or keyword only and why. */
export interface RecallSearch {
  readonly hits: RecallHit[];
  /** `hybrid`: keyword and vector search fused; `keyword-only`: see `reason`. */
  readonly mode: 'hybrid' | 'keyword-only';
  /**
   * `no_embedder`: none configured; `embedding_deadline`: the query embedding missed `queryEmbeddingTimeoutMs`
   * (or the embedder said at once that it would); `embedder_failed`: it failed (`onQueryEmbeddingError`).
   */
  readonly reason?: 'no_embedder' | QueryEmbeddingMiss;
  /** The model whose vectors ranked the vector search (`hybrid` only): the refiner's or the embedder's. */
  readonly model?: string;
  /**
   * True where the candidates are a chat whose assistant answers at length (their replies at least
   * `assistantChatRatio` times as long as the user's turns): the role constants ranked them, and the
   * hybrid context gives the replies short snippets (decision 0046).
   */
  readonly longReplies: boolean;
}

/** Why a query has no vector from an embedder it has (see {@link RecallSearch}). */
export type QueryEmbeddingMiss = 'embedding_deadline' | 'embedder_failed';

/** How the candidates were searched (see {@link RecallSearch}). */
type SearchMode = Omit<RecallSearch, 'hits' | 'longReplies'>;

/**
 * How `recall` weighs its evidence. The tuned values are what 5-fold cross-validation over LoCoMo's
 * conversations chooses (`mnemo bench locomo --folds 5`: each fold's choice scored on conversations it
 * never saw; see `packages/cli/src/bench/README.md` for every run); the gap, slack and top-hits values
 * are set a priori, not tuned.
 */
export const recallTuning: RecallTuning = Object.freeze({
  /**
   * The constant c of reciprocal rank fusion. The classic 60 (Cormack et al. 2009) flattens the head so
   * much that a weak retriever's top hits tie with a strong one's; a small c keeps the head's order while
   * still rewarding agreement.
   */
  rrfConstant: 5,
  /** ×2 for messages by a speaker the query names ("What did Caroline …?"). */
  speakerBoost: 1,
  /** An answer sits next to its question ("How was the trip?" / "Amazing, we saw dolphins"). */
  neighbourShare: 0.3,
  /** A message of a session that is about the query as a whole rises with it (session-level retrieval). */
  episodeShare: 0.1,
  /** Chats pause between sessions; an hour of silence starts a new episode. */
  episodeGapMinutes: 60,
  episodeTopHits: 3,
  /** Spreading hits over sessions (MMR) did not help on held-out folds: off. */
  episodeDiversity: 0,
  /** ×5 for a message said in a period the query names ("in June", "on 13 October 2023"): nearly a filter, but soft. */
  timeBoost: 4,
  timeSlackDays: 14,
  /** A second keyword search with the first hits' words, fused at 0.3 of a first list's weight (multi-hop answers). */
  secondHopWeight: 0.3,
  /** Spreading a list question's hits over sessions did not help on held-out folds: off. */
  listDiversity: 0,
  /** A list question keeps the whole episode share: taking it away (× 0, run 5) did not help on held-out folds with the length prior and the list speaker boost (run 6). */
  listEpisodeFactor: 1,
  /** Up to ×3 for the messages of a session that holds all of the query's words between its turns (the session as one unit). */
  episodeCoverage: 2,
  /** × (content words)^0.3 for a message's own score: a turn that says more is more often the answer than "Wow, cool!". */
  lengthPrior: 0.3,
  /** ×2 more, after the shares, for a list question's messages by the speaker it names ("What activities does Melanie partake in?"). */
  listSpeakerBoost: 1,
  /**
   * Where replies are long (`assistantChatRatio`), the length prior counts at most 16 content words: a long
   * reply is not favoured for its length alone. Elsewhere no cap. Chosen by the folds (decision 0033).
   */
  lengthPriorCap: 16,
  /** A reply's echo of the user's words is not discounted (off until the folds choose it; decision 0033). */
  echoDiscount: 0,
  /**
   * A user turn gets its answering reply's score × the reply's echo of it (decision 0033): what a long
   * reply matched by repeating the user's words counts for the user's turn. Chosen by folds over LoCoMo
   * and the generated user–assistant chats together.
   */
  exchangeShare: 1,
  /** Where replies are long (`assistantChatRatio`), a reply's own score × 0.7: what the user said counts more (decision 0033). */
  assistantPrior: 0.3,
  /**
   * The role constants count where the candidates' assistant replies are at least twice as long as the
   * user's turns: a person and an assistant that answers at length, not two people chatting (LoCoMo's
   * sides are within 0.8–1.14 of each other). A value set a priori; every fold chose the role constants
   * with it, which cost LoCoMo nothing (decision 0033).
   */
  assistantChatRatio: 2,
  /**
   * The refiner's space ranks only where the candidates' replies are less than twice as long as the user's
   * turns (two people chatting, a bot's short replies); a person with an assistant that answers at length
   * ranks in the embedder's space, the static table's, which ranks those chats better. Every fold chose 2
   * over always (100) and 3: the chats' held-out folds frac@10 87.3 → 88.6, LoCoMo's 81.8 unchanged
   * (decision 0045, `bench/README.md`).
   */
  refinerChatRatio: 2,
  /** No recency decay: no fold chose a half-life (30 or 180 days) over none (decision 0035). */
  recencyHalfLifeDays: 0,
  /**
   * ×1.5 for a message that stated one of the user's current facts (what extraction found durable in it):
   * every fold over LoCoMo and the generated user–assistant chats chose it (chats +1.5, LoCoMo −0.1 on
   * held-out folds; decision 0035). It costs recall one read of the user's facts.
   */
  importanceBoost: 0.5,
});

/** First hits whose words a second hop searches for (`secondHopWeight`). */
const secondHopSeeds = 3;

const maxK = 200;

/**
 * Finds the few past messages of a user that a query needs: BM25 keyword search and vector search,
 * and a second keyword search with the first hits' words, fused by reciprocal rank; a query word that
 * names a speaker is matched against who said a message instead of its text; a message whose session
 * holds more of the query's words rises (coverage); each message then gets a share of its best
 * neighbour's and its session's scores, and its own factor: a turn that says more rises (length prior),
 * and so does the named speaker's own turn for a question that asks for a list; recency breaks ties.
 * Throws `invalid_input` for a blank query or a bad option; a failing embedder's error (`model_failed`,
 * `unauthorized`) is thrown unless `onQueryEmbeddingError` takes it (then keyword-only).
 */
export async function recall(
  dependencies: RecallDependencies,
  user: UserScope,
  query: string,
  options: RecallOptions = {},
): Promise<RecallHit[]> {
  return (await searchRecall(dependencies, user, query, options)).hits;
}

/** {@link recall}, saying also whether vector search took part (the context report shows it). */
export async function searchRecall(
  dependencies: RecallDependencies,
  user: UserScope,
  query: string,
  options: RecallOptions = {},
): Promise<RecallSearch> {
  const k = options.k ?? 10;
  if (!Number.isInteger(k) || k < 1 || k > maxK)
    throw new MemoryError('invalid_input', `k must be an integer from 1 to ${maxK}`, { details: { field: 'k' } });
  if (typeof query !== 'string' || query.trim().length === 0)
    throw new MemoryError('invalid_input', 'query must be a non-empty string', { details: { field: 'query' } });
  const neighbours = options.neighbours ?? 0;
  if (!Number.isInteger(neighbours) || neighbours < 0 || neighbours > 5) {
    throw new MemoryError('invalid_input', 'neighbours must be an integer from 0 to 5', {
      details: { field: 'neighbours' },
    });
  }
  const tuning =
    options.tuning === undefined ? recallTuning : checkRecallTuning({ ...recallTuning, ...options.tuning });
  const secondHop = options.secondHop === true || tuning.secondHopWeight > 0;
  const { candidates, searched: found } = await searchCandidates(
    dependencies,
    user,
    query,
    {
      ...options,
      candidates: Math.min(1000, options.candidates ?? Math.max(50, 5 * k)),
      secondHop,
      importance: options.importance === true || tuning.importanceBoost > 0,
    },
    // The second hop's seeds rank under the library's constants, so both ratios must rule the refiner out.
    secondHop ? Math.max(tuning.refinerChatRatio, recallTuning.refinerChatRatio) : tuning.refinerChatRatio,
  );
  const searched: SearchMode =
    found.mode === 'hybrid' && vectorSpaceOf(candidates, tuning) === 'refiner'
      ? { ...found, model: dependencies.refiner!.model }
      : found;
  const ranked = rankRecallCandidates(candidates, tuning, k).slice(0, k);
  const longReplies = candidatesReplyRatio(candidates) >= tuning.assistantChatRatio;
  if (neighbours === 0) return { hits: ranked, ...searched, longReplies };
  const callOptions = options.signal === undefined ? {} : { signal: options.signal };
  const hits = await Promise.all(
    ranked.map(async (hit) => {
      const scope = { ...user, conversationId: hit.conversationId };
      const around = await dependencies.store.listMessages(
        scope,
        { afterSeq: hit.message.seq - neighbours - 1, beforeSeq: hit.message.seq + neighbours + 1 },
        callOptions,
      );
      return { ...hit, neighbours: around.filter((message) => message.seq !== hit.message.seq) };
    }),
  );
  return { hits, ...searched, longReplies };
}

/**
 * The candidate lists of a recall, before ranking: vector search (when there is an embedder; `refined`
 * too, in the refiner's space, when it could be had) and BM25
 * keyword search, `options.candidates` hits each (default 250), with the query words that name a speaker
 * left out of the keyword query and returned in `speakers`; `exclude` applied. A benchmark ranks them
 * under many tunings with {@link rankRecallCandidates} without searching again.
 */
export async function collectRecallCandidates(
  dependencies: RecallDependencies,
  user: UserScope,
  query: string,
  options: RecallOptions = {},
): Promise<RecallCandidates> {
  return (await searchCandidates(dependencies, user, query, options)).candidates;
}

/**
 * `refinerChatRatio`, when given: the reply length ratio ({@link chatReplyRatio}) of the keyword and
 * embedder hits at or above which the ranking would not use the refiner's space, so the refiner's search
 * is not run (a recall ranks under one tuning; a benchmark, which ranks under many, collects both lists).
 */
async function searchCandidates(
  dependencies: RecallDependencies,
  user: UserScope,
  query: string,
  options: RecallOptions,
  refinerChatRatio?: number,
): Promise<{ candidates: RecallCandidates; searched: SearchMode }> {
  const pool = options.candidates ?? 250;
  const search = {
    k: pool,
    ...(options.conversations === undefined ? {} : { conversationIds: options.conversations }),
    ...(options.since === undefined ? {} : { since: options.since }),
    ...(options.until === undefined ? {} : { until: options.until }),
  };
  const callOptions = options.signal === undefined ? {} : { signal: options.signal };
  const { store, embedder } = dependencies;
  const terms = keywordTerms(query);
  // The hits of the first search name the speakers (vector search's when there are vectors, else a
  // keyword search's with every term), so the keyword search can leave speaker names out of the text
  // query; it runs with every term again only if none is a speaker. The keyword search with every term
  // starts at once, beside the query embedding and the vector search (a store out of process answers
  // them together); it goes unused when the query names a speaker.
  const byAllTerms = store.searchKeyword(user, terms, search, callOptions);
  byAllTerms.catch(() => undefined);
  const embedded = embedder === undefined ? undefined : await embedQuery(dependencies, embedder, query, options.signal);
  const queryVector = embedded instanceof Float32Array ? embedded : undefined;
  const base =
    embedder === undefined || queryVector === undefined
      ? []
      : await store.searchVector(user, embedder.model, queryVector, search, callOptions);
  const excluded = (conversationId: string, seq: number) =>
    options.exclude !== undefined &&
    conversationId === options.exclude.conversationId &&
    seq >= options.exclude.fromSeq;
  const kept = (hits: readonly SearchHit[]) => hits.filter((hit) => !excluded(hit.conversationId, hit.message.seq));
  const speakersOf = async (named: readonly SearchHit[]) =>
    speakerTerms(terms, named.length === 0 ? await byAllTerms : named);
  // The keyword search for the speakers the hits name, with every term again when none is a speaker.
  const searchKeyword = async (speakers: Set<string>) => {
    const topicTerms = terms.filter((term) => !speakers.has(term));
    const searchTerms = speakers.size > 0 && topicTerms.length > 0 ? topicTerms : terms;
    const hits =
      searchTerms === terms ? await byAllTerms : await store.searchKeyword(user, searchTerms, search, callOptions);
    return { speakers, searchTerms, hits };
  };
  // Where the embedder's hits and the keyword hits they lead to are a chat whose assistant answers at
  // length, the ranking would not use the refiner's space: its query embedding and search are not run.
  // (The ranking reads the keyword hits of the speakers the refiner's hits name; where those differ from
  // the embedder's, the two can judge the chat differently, and this reads the embedder's.)
  const unrefined =
    dependencies.refiner === undefined ||
    refinerChatRatio === undefined ||
    refinerChatRatio >= refinerAlways ||
    base.length === 0
      ? undefined
      : await searchKeyword(await speakersOf(base));
  const longReplies =
    unrefined !== undefined &&
    refinerChatRatio !== undefined &&
    chatReplyRatio(kept(unrefined.hits), kept(base)) >= refinerChatRatio;
  const refined =
    embedder === undefined || queryVector === undefined || dependencies.refiner === undefined || longReplies
      ? undefined
      : await refinedSearch(dependencies, dependencies.refiner, user, query, base, search, callOptions, options);
  const mode = embedder !== undefined && queryVector !== undefined ? ('hybrid' as const) : ('keyword-only' as const);
  // The embedder's model; `searchRecall` names the refiner's where the ranking chose its space.
  const searched: SearchMode =
    mode === 'hybrid'
      ? { mode, model: embedder!.model }
      : { mode, reason: embedded === undefined ? ('no_embedder' as const) : (embedded as QueryEmbeddingMiss) };
  // Speakers are read off the better model's hits where it searched (either list names them); the
  // keyword search for the embedder's hits is kept where the refiner's name the same speakers.
  const named = await speakersOf(refined ?? base);
  const {
    speakers,
    searchTerms,
    hits: keyword,
  } = unrefined !== undefined && sameTerms(named, unrefined.speakers) ? unrefined : await searchKeyword(named);
  // Which messages stated one of the user's current facts (one read of the user's few facts), for the importance boost.
  const current =
    options.importance !== true
      ? undefined
      : (options.facts?.filter((fact) => fact.validTo === undefined) ?? (await store.listFacts(user, {}, callOptions)));
  const important =
    current === undefined
      ? undefined
      : new Set(
          current.flatMap((fact) =>
            fact.sourceConversationId === undefined
              ? []
              : fact.sourceSeqs.map((seq) => `${fact.sourceConversationId}\u0000${seq}`),
          ),
        );
  const first = {
    keyword: kept(keyword),
    vector: kept(base),
    ...(refined === undefined ? {} : { refined: kept(refined) }),
    speakers,
    periods: findQueryPeriods(query),
    list: asksForList(query),
    terms: searchTerms,
    ...(important === undefined ? {} : { important }),
  };
  if (options.secondHop !== true) return { candidates: first, searched };
  // The seeds are ranked with the library's own constants whatever the tuning, so a benchmark that
  // sweeps the tuning over one set of candidates sees the same second hop that recall would run.
  const seeds = rankRecallCandidates(first, recallTuning, secondHopSeeds).slice(0, secondHopSeeds);
  const hopTerms = secondHopTerms(searchTerms, speakers, seeds);
  const secondHop =
    seeds.length === 0 || hopTerms.length === searchTerms.length
      ? []
      : await store.searchKeyword(user, hopTerms, search, callOptions);
  return {
    candidates: { ...first, secondHop: kept(secondHop) },
    searched,
  };
}

/**
 * The vector search in the refiner's space, or `undefined` when it cannot be had: the refiner cannot
 * embed the query within the deadline, or a conversation the embedder's hits come from lacks more than
 * {@link refinerGapLimit} of the refiner's vectors among its newest {@link refinerGapWindow} messages (its
 * backlog is large: a loaded machine; the `refine` job embeds oldest first, so older ones are done), or
 * every such conversation is one the refiner leaves alone ({@link refinerRanksConversation}). The few
 * messages without a refined vector (the newest, still queued) keep their place by the embedder's
 * ranking, so no message is left out of the vector search because its refined vector is behind; so do all
 * the hits of a conversation the refiner leaves alone, beside the user's other conversations ranked in
 * its space (decision 0049).
 */
async function refinedSearch(
  dependencies: RecallDependencies,
  refiner: Embedder,
  user: UserScope,
  query: string,
  base: readonly SearchHit[],
  search: SearchOptions,
  callOptions: CallOptions,
  options: RecallOptions,
): Promise<SearchHit[] | undefined> {
  const { store } = dependencies;
  const conversations = [...new Set(base.map((hit) => hit.conversationId))];
  const gaps = await Promise.all(
    conversations.map((conversationId) =>
      store.listUnembeddedNewest(
        { ...user, conversationId },
        refiner.model,
        refinerGapWindow,
        refinerGapLimit + 1,
        callOptions,
      ),
    ),
  );
  // A conversation the refiner leaves alone (a chat whose assistant answers at length, decision 0047)
  // lacks its vectors by design, not for a backlog: it keeps the embedder's ranks within the refined list,
  // so the same user's other conversations still rank in the refiner's space (decision 0049).
  const leftAlone = await Promise.all(
    gaps.map(
      async (gap, index) =>
        gap.length > refinerGapLimit &&
        !(await refinerRanksConversation(store, { ...user, conversationId: conversations[index]! }, callOptions)),
    ),
  );
  // A backlog, or nothing but conversations left alone: the embedder's space, with no query embedding.
  if (gaps.some((gap, index) => gap.length > refinerGapLimit && !leftAlone[index])) return undefined;
  if (leftAlone.length > 0 && leftAlone.every(Boolean)) return undefined;
  const queryVector = await embedQuery(dependencies, refiner, query, options.signal);
  if (!(queryVector instanceof Float32Array)) return undefined;
  const refined = await store.searchVector(user, refiner.model, queryVector, search, callOptions);
  const alone = new Set(conversations.filter((_, index) => leftAlone[index]));
  const unrefined = new Set(
    gaps.flatMap((gap, index) =>
      leftAlone[index] ? [] : gap.map((message) => `${conversations[index]!}\u0000${message.seq}`),
    ),
  );
  if (unrefined.size === 0 && alone.size === 0) return refined;
  const merged = refined.filter((hit) => !alone.has(hit.conversationId));
  base.forEach((hit, rank) => {
    if (alone.has(hit.conversationId) || unrefined.has(`${hit.conversationId}\u0000${hit.message.seq}`))
      merged.splice(Math.min(rank, merged.length), 0, hit);
  });
  return merged.slice(0, search.k);
}

/**
 * The query's vector, or why there is none: `embedding_deadline` when it missed its deadline (or the
 * embedder said at once that it would: `canEmbedWithin`), `embedder_failed` when the embedder failed and
 * the caller handles that (`onQueryEmbeddingError`; without it the failure is thrown); synchronous for an
 * embedder with `embedSync`. The embedding's own signal aborts at the deadline (or with the caller's), so
 * an embedder that queues work can drop it instead of doing it for nobody. A caller's abort is thrown.
 */
async function embedQuery(
  dependencies: RecallDependencies,
  embedder: Embedder,
  query: string,
  signal: AbortSignal | undefined,
): Promise<Float32Array | QueryEmbeddingMiss> {
  const { queryEmbeddingTimeoutMs: timeoutMs, onQueryEmbeddingError } = dependencies;
  try {
    // An in-thread embedder answers in microseconds: no timer, no race.
    if (embedder.embedSync !== undefined) {
      signal?.throwIfAborted();
      return embedder.embedSync([query])[0]!;
    }
    // The embedder's own "cannot meet the deadline": keyword-only now rather than after waiting it out.
    if (timeoutMs !== undefined && embedder.canEmbedWithin?.(timeoutMs) === false)
      return embedder.failing === true ? 'embedder_failed' : 'embedding_deadline';
    if (timeoutMs === undefined) return (await embedder.embed([query], signal === undefined ? {} : { signal }))[0]!;
    return await raceDeadline(embedder, query, timeoutMs, signal);
  } catch (error) {
    if (onQueryEmbeddingError === undefined || signal?.aborted === true) throw error;
    onQueryEmbeddingError(error);
    return 'embedder_failed';
  }
}

/** The query's embedding, or `embedding_deadline` once `timeoutMs` passed (the embedding's signal then aborts). */
async function raceDeadline(
  embedder: Embedder,
  query: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<Float32Array | 'embedding_deadline'> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const missed = new Promise<'embedding_deadline'>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new MemoryError('unavailable', `query embedding passed its ${timeoutMs} ms deadline`));
      resolve('embedding_deadline');
    }, timeoutMs);
  });
  try {
    const embedded = embedder.embed([query], { signal: controller.signal }).then(([vector]) => vector!);
    // Once the deadline passed, a late rejection (the abort) is nobody's error.
    embedded.catch(() => undefined);
    return await Promise.race([embedded, missed]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

function sameTerms(one: ReadonlySet<string>, other: ReadonlySet<string>): boolean {
  return one.size === other.size && [...one].every((term) => other.has(term));
}

import { MemoryError } from '../errors/memory-error.js';
import { episodeCoverage, termMask } from './episode-coverage.js';
import { assistantFlags, echoShares } from './exchange-roles.js';
import { keywordTerms, maxKeywordTerms } from './keyword-terms.js';
import { withinPeriods, type QueryPeriod } from './query-periods.js';
import type { SearchHit } from './search.js';
import { spokenBy } from './speaker-terms.js';
import type { RecallHit } from './recall-hit.js';

/** How recall weighs its evidence. Every field is a plain number so a benchmark can sweep it. */
export interface RecallTuning {
  /** The constant c of reciprocal rank fusion, Σ 1 / (c + rank). */
  readonly rrfConstant: number;
  /** Fused score × (1 + this) for a message said by a speaker the query names. */
  readonly speakerBoost: number;
  /** A candidate also gets this share of its best adjacent candidate's score (same conversation, seq ± 1). */
  readonly neighbourShare: number;
  /**
   * A candidate also gets this share of the summed scores of the other candidates of its episode (at
   * most the best {@link episodeTopHits}): an episode is a run of a conversation's messages with no pause
   * longer than {@link episodeGapMinutes} (a session), so a message of a session that is about the query
   * as a whole rises with it, the way session-level retrieval finds what single turns miss.
   */
  readonly episodeShare: number;
  /** Most minutes between two messages of one episode. */
  readonly episodeGapMinutes: number;
  /** The episode's best other candidates that count towards {@link episodeShare}. */
  readonly episodeTopHits: number;
  /**
   * Diversity among the hits (maximal marginal relevance with "same episode" as the similarity): while
   * picking hits best first, a candidate's score is multiplied by (1 − this) for every hit already
   * picked from its episode. 0 keeps the plain order.
   */
  readonly episodeDiversity: number;
  /**
   * Fused score × (1 + this) for a message said during a period the query names ("in June", "on 13
   * October 2023") or within {@link timeSlackDays} after it: dates in a question resolved against when
   * things were said.
   */
  readonly timeBoost: number;
  /** Days after a named period that still count as in it (what happened is often told a little later). */
  readonly timeSlackDays: number;
  /**
   * Weight of the second-hop list in the fusion, w / (c + rank): a keyword search with the query's terms
   * and the words of the first hits (`secondHopTerms`), for answers that share no word with the question
   * but with what the first hits are about. 0 (off) runs no second search.
   */
  readonly secondHopWeight: number;
  /**
   * {@link episodeDiversity} for a query that asks for a list or a count (`asksForList`: "What books has
   * she read?"), whose answer is spread over sessions; 0 leaves such queries at `episodeDiversity`.
   */
  readonly listDiversity: number;
  /** {@link episodeShare} × this for a list question (its answer is in several sessions, the share favours one); 1 leaves it. */
  readonly listEpisodeFactor: number;
  /**
   * Fused score × (1 + this × coverage), coverage being the share of the query's terms that the
   * candidates of the message's episode contain between them (`episodeCoverage`): the session read as
   * one retrieval unit. 0 is off.
   */
  readonly episodeCoverage: number;
  /**
   * Score × w^this after the neighbour and episode shares, w being the message's distinct content words
   * (`keywordTerms`, 1–32): a document-length prior, on the message's own score only (a short turn does not
   * pass it to its neighbours). BM25 normalizes length away and a short turn ("Wow, cool!") is close to many
   * questions in vector space, while the turns that hold an answer say more. 0 is off.
   */
  readonly lengthPrior: number;
  /**
   * Score × (1 + this) after the shares for a message by a speaker the query names, when the query asks
   * for a list or a count (`asksForList`): the things someone did over time are told in that person's own
   * turns, while the other speaker's turns around them share the topic's words. On top of {@link speakerBoost}
   * (which also reaches the neighbours through their shares); 0 is off.
   */
  readonly listSpeakerBoost: number;
  /**
   * Content words past which {@link lengthPrior} stops growing (w is min(words, this)): a short chat line
   * still yields to a turn that says something, but a long reply is not favoured for its length alone. 32
   * (the most `keywordTerms` counts) is the prior without a cap.
   */
  readonly lengthPriorCap: number;
  /**
   * An assistant reply's own score × (1 − this × echo), echo being the share of its query terms that the
   * user turn it answers holds too (`echoShares`): a reply that repeats the question is not evidence of it.
   * On the reply's own score only; 0 is off.
   */
  readonly echoDiscount: number;
  /**
   * A user turn also gets this share × echo of the score of the assistant reply that answers it (the
   * next message), echo being the share of the reply's query terms the turn holds (`echoShares`), when
   * that beats its neighbour share: the turn and its reply are one exchange, and what the reply matched by
   * repeating the turn counts for the turn. 0 is off.
   */
  readonly exchangeShare: number;
  /** An assistant reply's own score × (1 − this): a role prior for what the user said. 0 is off. */
  readonly assistantPrior: number;
  /**
   * The role constants ({@link assistantPrior}, {@link echoDiscount}, {@link lengthPriorCap}) count only
   * among candidates whose assistant replies are at least this many times as long as the user's turns, on
   * average (`replyLengthRatio`): a person talking to an assistant that answers at length, where a reply
   * repeats and elaborates the user's words. A chat between two people (imported with one side as the
   * assistant) has turns of like length on both sides and ranks without them. 0: they always count.
   */
  readonly assistantChatRatio: number;
  /**
   * The vector search ranks in the refiner's space (when the candidates hold its list, `refined`) only
   * where the assistant replies among the keyword and embedder candidates (of the conversation most
   * keyword hits come from: `chatReplyRatio`) are less than this many times as long as the user's turns;
   * at or above it, in the embedder's space. Each model where it ranks better: the models' spaces suit
   * different kinds of chat. 100: the refiner's space always.
   */
  readonly refinerChatRatio: number;
  /**
   * Recency decay of a message's own score: × 0.5^(days older than the newest candidate / this), so a
   * message this many days older counts half (issue 26: decay). 0 is off.
   */
  readonly recencyHalfLifeDays: number;
  /**
   * A message's own score × (1 + this) when it is the source of a current fact of the user (extraction
   * found something durable in it: an importance score). Needs the candidates' `important` set. 0 is off.
   */
  readonly importanceBoost: number;
}

/** The lists recall fuses for one query, and the query words that name a speaker. */
export interface RecallCandidates {
  readonly keyword: readonly SearchHit[];
  /** The vector search in the embedder's space. */
  readonly vector: readonly SearchHit[];
  /** The vector search in the refiner's space (decision 0045), where it could be had; see `refinerChatRatio`. */
  readonly refined?: readonly SearchHit[];
  readonly speakers: ReadonlySet<string>;
  /** Calendar periods the query names (`findQueryPeriods`); none by default. */
  readonly periods?: readonly QueryPeriod[];
  /** The second-hop keyword search's hits (see `secondHopWeight`); none by default. */
  readonly secondHop?: readonly SearchHit[];
  /** The query asks for a list or a count (`asksForList`); false by default. */
  readonly list?: boolean;
  /** The query's topic terms (what the keyword search searched for), for `episodeCoverage`; none by default. */
  readonly terms?: readonly string[];
  /** Messages that are the source of a current fact, as `conversationId` + NUL + seq keys, for `importanceBoost`; none by default. */
  readonly important?: ReadonlySet<string>;
}

/**
 * Recall's candidates in numeric form, ready to be ranked under many tunings: each distinct message once,
 * its rank in either list (0: absent), whether the query names its speaker, its recency and which other
 * candidates are its seq neighbours. Made by {@link prepareRecallCandidates}.
 */
export interface PreparedCandidates {
  readonly hits: readonly SearchHit[];
  readonly keywordRank: Int32Array;
  readonly keywordScore: Float64Array;
  readonly vectorRank: Int32Array;
  readonly vectorSimilarity: Float64Array;
  /** Rank in the second-hop list (0: absent). */
  readonly secondHopRank: Int32Array;
  readonly list: boolean;
  /** Which query terms each candidate contains (`termMask`), and how many terms there are. */
  readonly termMasks: Uint32Array;
  readonly termCount: number;
  /** Distinct content words of each candidate (`keywordTerms`, at least 1), for `lengthPrior`. */
  readonly words: Uint8Array;
  readonly spoken: Uint8Array;
  /** 1 for an assistant reply (`assistantFlags`). */
  readonly assistant: Uint8Array;
  /** Mean length of the assistant replies among the candidates over that of the other turns (1 without both). */
  readonly replyLengthRatio: number;
  /** Share of an assistant reply's query terms that the user turn it answers also holds (`echoShares`). */
  readonly echo: Float64Array;
  /** 1 when the message was said in a period the query names (with `timeSlackDays` of slack, per slack value). */
  readonly inPeriodBySlack: Map<number, Uint8Array>;
  readonly periods: readonly QueryPeriod[];
  readonly recency: Float64Array;
  /** Days each candidate is older than the newest one, for `recencyHalfLifeDays`. */
  readonly ageDays: Float64Array;
  /** 1 for a candidate in the candidates' `important` set. */
  readonly important: Uint8Array;
  /** Index of the candidate one seq before / after in the same conversation, or −1. */
  readonly previous: Int32Array;
  readonly next: Int32Array;
  /** Episode of each candidate, per gap in minutes (filled on first use). */
  readonly episodesByGap: Map<number, Int32Array>;
}

/** A ranking of prepared candidates: candidate indices best first, and each candidate's score parts. */
export interface PreparedRanking {
  readonly order: readonly number[];
  readonly fused: Float64Array;
  readonly score: Float64Array;
  readonly boosted: Float64Array;
  readonly neighbour: Float64Array;
  readonly episode: Float64Array;
  /** Per candidate, the factor of the length prior and the list speaker boost on the summed score (1: none). */
  readonly own: Float64Array;
  /** Per candidate, the share of the query's terms its episode holds, when `episodeCoverage` counted. */
  readonly coverage?: Float64Array;
}

/** `refinerChatRatio` at which the refiner's space ranks whatever the chat (its range's top). */
export const refinerAlways = 100;

/**
 * The space the vector search ranks in under a tuning: the refiner's where the candidates hold its list
 * and the assistant replies among the keyword and embedder hits (the lists that do not depend on the
 * choice; {@link chatReplyRatio}) are less than `refinerChatRatio` times as long as the user's turns;
 * else the embedder's.
 */
export function vectorSpaceOf(candidates: RecallCandidates, tuning: RecallTuning): 'refiner' | 'embedder' {
  if (candidates.refined === undefined) return 'embedder';
  if (tuning.refinerChatRatio >= refinerAlways) return 'refiner';
  return candidatesReplyRatio(candidates) < tuning.refinerChatRatio ? 'refiner' : 'embedder';
}

/** {@link chatReplyRatio} of the candidates' keyword and embedder lists, read once per set of candidates. */
export function candidatesReplyRatio(candidates: RecallCandidates): number {
  let ratio = chatRatios.get(candidates);
  if (ratio === undefined) chatRatios.set(candidates, (ratio = chatReplyRatio(candidates.keyword, candidates.vector)));
  return ratio;
}

/**
 * How many times as long the assistant replies among a recall's keyword and embedder hits are as the
 * user's turns (1 when either is missing): what {@link vectorSpaceOf} compares with `refinerChatRatio`.
 * Read on the hits of the conversation most keyword hits come from, where those show both sides: a user's
 * other conversations among the vector hits (a short question is near many long replies) do not judge
 * the chat the question is about (decision 0049). A user with one conversation: all the hits.
 */
export function chatReplyRatio(keyword: readonly SearchHit[], vector: readonly SearchHit[]): number {
  const hits = [...keyword, ...vector];
  const topical = mostFrequentConversation(keyword);
  const own = topical === undefined ? [] : hits.filter((hit) => hit.conversationId === topical);
  const sides = new Set(own.map((hit) => hit.message.role === 'assistant'));
  return messagesReplyRatio((sides.size === 2 ? own : hits).map((hit) => hit.message));
}

// The conversation most of `hits` come from (the first hit's among equals), or undefined for none.
function mostFrequentConversation(hits: readonly SearchHit[]): string | undefined {
  const counts = new Map<string, number>();
  let best: string | undefined;
  for (const hit of hits) {
    const count = (counts.get(hit.conversationId) ?? 0) + 1;
    counts.set(hit.conversationId, count);
    if (best === undefined || count > counts.get(best)!) best = hit.conversationId;
  }
  return best;
}

// The candidates' reply length ratio, read once per set of candidates (a benchmark asks under many tunings).
const chatRatios = new WeakMap<RecallCandidates, number>();

/** The candidates with the vector list of one space as `vector` (and no `refined`): what {@link prepareRecallCandidates} ranks. */
export function inVectorSpace(candidates: RecallCandidates, space: 'refiner' | 'embedder'): RecallCandidates {
  const { refined, ...rest } = candidates;
  return space === 'refiner' && refined !== undefined ? { ...rest, vector: refined } : rest;
}

/**
 * Puts the candidates in the numeric form that {@link rankPreparedCandidates} ranks quickly, with
 * `vector` as the vector list (a `refined` list is not read: choose the space first, {@link inVectorSpace}).
 */
export function prepareRecallCandidates(candidates: RecallCandidates): PreparedCandidates {
  const index = new Map<string, number>();
  const hits: SearchHit[] = [];
  const secondHop = candidates.secondHop ?? [];
  for (const hit of [...candidates.keyword, ...candidates.vector, ...secondHop]) {
    const key = keyOf(hit.conversationId, hit.message.seq);
    if (!index.has(key)) index.set(key, hits.push(hit) - 1);
  }
  const count = hits.length;
  const keywordRank = new Int32Array(count);
  const keywordScore = new Float64Array(count);
  const vectorRank = new Int32Array(count);
  const vectorSimilarity = new Float64Array(count);
  candidates.keyword.forEach((hit, rank) => {
    const at = index.get(keyOf(hit.conversationId, hit.message.seq))!;
    [keywordRank[at], keywordScore[at]] = [rank + 1, hit.score];
  });
  candidates.vector.forEach((hit, rank) => {
    const at = index.get(keyOf(hit.conversationId, hit.message.seq))!;
    [vectorRank[at], vectorSimilarity[at]] = [rank + 1, hit.score];
  });
  const secondHopRank = new Int32Array(count);
  secondHop.forEach((hit, rank) => {
    secondHopRank[index.get(keyOf(hit.conversationId, hit.message.seq))!] = rank + 1;
  });
  const times = hits.map((hit) => Date.parse(hit.message.createdAt));
  const oldest = Math.min(...times);
  const span = Math.max(1, Math.max(...times) - oldest);
  // Each candidate's content words, read once: the coverage's term masks and the length prior use them.
  const said = hits.map((hit) => keywordTerms(hit.message.content));
  const neighbourOf = (hit: SearchHit, offset: number) =>
    index.get(keyOf(hit.conversationId, hit.message.seq + offset)) ?? -1;
  const termMasks = Uint32Array.from(said, (words) => termMask(words, candidates.terms ?? []));
  const previous = Int32Array.from(hits, (hit) => neighbourOf(hit, -1));
  const assistant = assistantFlags(hits);
  return {
    hits,
    keywordRank,
    keywordScore,
    vectorRank,
    vectorSimilarity,
    secondHopRank,
    list: candidates.list === true,
    termMasks,
    termCount: candidates.terms?.length ?? 0,
    words: Uint8Array.from(said, (words) => Math.max(1, words.length)),
    spoken: Uint8Array.from(hits, (hit) => (spokenBy(hit.message, candidates.speakers) ? 1 : 0)),
    assistant,
    replyLengthRatio: messagesReplyRatio(hits.map((hit) => hit.message)),
    echo: echoShares(termMasks, assistant, previous),
    inPeriodBySlack: new Map(),
    periods: candidates.periods ?? [],
    recency: Float64Array.from(times, (time) => (time - oldest) / span),
    ageDays: Float64Array.from(times, (time) => (oldest + span - time) / 86_400_000),
    important: Uint8Array.from(hits, (hit) =>
      candidates.important?.has(keyOf(hit.conversationId, hit.message.seq)) === true ? 1 : 0,
    ),
    previous,
    next: Int32Array.from(hits, (hit) => neighbourOf(hit, 1)),
    episodesByGap: new Map(),
  };
}

/**
 * Ranks prepared candidates under a tuning: reciprocal rank fusion, the speaker and period boosts and
 * the coverage, the neighbour and episode shares, each message's own factor (length prior, list speaker
 * boost), then the episode diversity over the first `k` (greedy, so the first hits do not depend
 * on `k`). Ties go to the newer message.
 */
export function rankPreparedCandidates(prepared: PreparedCandidates, tuning: RecallTuning, k: number): PreparedRanking {
  const count = prepared.hits.length;
  const fused = new Float64Array(count);
  const boosted = new Float64Array(count);
  const inPeriod =
    tuning.timeBoost > 0 && prepared.periods.length > 0 ? periodFlags(prepared, tuning.timeSlackDays) : undefined;
  for (let at = 0; at < count; at += 1) {
    const keyword = prepared.keywordRank[at]!;
    const vector = prepared.vectorRank[at]!;
    const secondHop = prepared.secondHopRank[at]!;
    fused[at] =
      (keyword === 0 ? 0 : 1 / (tuning.rrfConstant + keyword)) +
      (vector === 0 ? 0 : 1 / (tuning.rrfConstant + vector)) +
      (secondHop === 0 ? 0 : tuning.secondHopWeight / (tuning.rrfConstant + secondHop));
    boosted[at] =
      fused[at]! *
      (prepared.spoken[at] === 1 ? 1 + tuning.speakerBoost : 1) *
      (inPeriod?.[at] === 1 ? 1 + tuning.timeBoost : 1);
  }
  const neighbour = new Float64Array(count);
  const episode = new Float64Array(count);
  const score = new Float64Array(count);
  const own = new Float64Array(count);
  const diversity = prepared.list && tuning.listDiversity > 0 ? tuning.listDiversity : tuning.episodeDiversity;
  const episodes =
    tuning.episodeShare > 0 || diversity > 0 || tuning.episodeCoverage > 0
      ? episodesOf(prepared, tuning.episodeGapMinutes)
      : undefined;
  const coverage =
    episodes !== undefined && tuning.episodeCoverage > 0
      ? episodeCoverage(prepared.termMasks, episodes, prepared.termCount)
      : undefined;
  if (coverage !== undefined)
    for (let at = 0; at < count; at += 1) boosted[at] = boosted[at]! * (1 + tuning.episodeCoverage * coverage[at]!);
  const episodeShare = prepared.list ? tuning.episodeShare * tuning.listEpisodeFactor : tuning.episodeShare;
  const support =
    episodes === undefined || episodeShare === 0 ? undefined : episodeSupport(boosted, episodes, tuning.episodeTopHits);
  const listSpeaker = prepared.list ? tuning.listSpeakerBoost : 0;
  const roles = prepared.replyLengthRatio >= tuning.assistantChatRatio;
  const lengthCap = roles ? tuning.lengthPriorCap : maxKeywordTerms;
  for (let at = 0; at < count; at += 1) {
    const previous = prepared.previous[at]!;
    const next = prepared.next[at]!;
    neighbour[at] = Math.max(
      tuning.neighbourShare * Math.max(previous < 0 ? 0 : boosted[previous]!, next < 0 ? 0 : boosted[next]!),
      exchangeSupport(prepared, boosted, at, tuning.exchangeShare),
    );
    episode[at] = support === undefined ? 0 : episodeShare * support[at]!;
    own[at] =
      (tuning.lengthPrior === 0 ? 1 : Math.min(prepared.words[at]!, lengthCap) ** tuning.lengthPrior) *
      (listSpeaker > 0 && prepared.spoken[at] === 1 ? 1 + listSpeaker : 1) *
      (roles ? roleFactor(prepared, at, tuning) : 1) *
      (tuning.recencyHalfLifeDays > 0 ? 0.5 ** (prepared.ageDays[at]! / tuning.recencyHalfLifeDays) : 1) *
      (tuning.importanceBoost > 0 && prepared.important[at] === 1 ? 1 + tuning.importanceBoost : 1);
    score[at] = (boosted[at]! + neighbour[at]! + episode[at]!) * own[at]!;
  }
  const order = Array.from({ length: count }, (_, at) => at).sort(
    (a, b) =>
      score[b]! - score[a]! ||
      prepared.recency[b]! - prepared.recency[a]! ||
      prepared.hits[b]!.message.seq - prepared.hits[a]!.message.seq,
  );
  const ranked = episodes === undefined || diversity === 0 ? order : diversify(order, score, episodes, diversity, k);
  return {
    order: ranked,
    fused,
    score,
    boosted,
    neighbour,
    episode,
    own,
    ...(coverage === undefined ? {} : { coverage }),
  };
}

/**
 * Orders recall's candidates under a tuning, best first (in the vector space {@link vectorSpaceOf}
 * chooses, {@link prepareRecallCandidates} then {@link rankPreparedCandidates}), each hit explained. `recall` calls it with its tuning.
 */
export function rankRecallCandidates(candidates: RecallCandidates, tuning: RecallTuning, k: number): RecallHit[] {
  const prepared = prepareRecallCandidates(inVectorSpace(candidates, vectorSpaceOf(candidates, tuning)));
  const ranking = rankPreparedCandidates(prepared, tuning, k);
  const inPeriod =
    tuning.timeBoost > 0 && prepared.periods.length > 0 ? periodFlags(prepared, tuning.timeSlackDays) : undefined;
  return ranking.order.map((at): RecallHit => {
    const hit = prepared.hits[at]!;
    const explain = {
      ...(prepared.keywordRank[at]! > 0
        ? { keywordRank: prepared.keywordRank[at]!, keywordScore: prepared.keywordScore[at]! }
        : {}),
      ...(prepared.vectorRank[at]! > 0
        ? { vectorRank: prepared.vectorRank[at]!, vectorSimilarity: prepared.vectorSimilarity[at]! }
        : {}),
      ...(prepared.secondHopRank[at]! > 0 && tuning.secondHopWeight > 0
        ? { secondHopRank: prepared.secondHopRank[at]! }
        : {}),
      recency: prepared.recency[at]!,
      fused: ranking.fused[at]!,
      ...(prepared.spoken[at] === 1 && (tuning.speakerBoost > 0 || (prepared.list && tuning.listSpeakerBoost > 0))
        ? { speaker: true }
        : {}),
      ...(inPeriod?.[at] === 1 ? { period: true } : {}),
      ...(ranking.neighbour[at]! > 0 ? { neighbour: ranking.neighbour[at]! } : {}),
      ...(ranking.episode[at]! > 0 ? { episode: ranking.episode[at]! } : {}),
      ...(ranking.coverage !== undefined && ranking.coverage[at]! > 0 ? { coverage: ranking.coverage[at]! } : {}),
      ...(ranking.own[at] !== 1 ? { own: ranking.own[at]! } : {}),
    };
    return { conversationId: hit.conversationId, message: hit.message, score: ranking.score[at]!, explain };
  });
}

/** Options of {@link fuse}. */
export interface FuseOptions {
  /** The constant c in Σ 1 / (c + rank); default 60 (Cormack et al. 2009). `recall` uses `recallTuning`. */
  readonly rrfConstant?: number;
}

/** Reciprocal rank fusion of the two lists (best first), recency breaking ties. */
export function fuse(
  keyword: readonly SearchHit[],
  vector: readonly SearchHit[],
  options: FuseOptions = {},
): RecallHit[] {
  const rrfConstant = options.rrfConstant ?? 60;
  const byMessage = new Map<
    string,
    { hit: SearchHit; keywordRank?: number; keywordScore?: number; vectorRank?: number; vectorSimilarity?: number }
  >();
  keyword.forEach((hit, index) =>
    byMessage.set(keyOf(hit.conversationId, hit.message.seq), { hit, keywordRank: index + 1, keywordScore: hit.score }),
  );
  vector.forEach((hit, index) => {
    const entry = byMessage.get(keyOf(hit.conversationId, hit.message.seq));
    if (entry === undefined)
      byMessage.set(keyOf(hit.conversationId, hit.message.seq), {
        hit,
        vectorRank: index + 1,
        vectorSimilarity: hit.score,
      });
    else Object.assign(entry, { vectorRank: index + 1, vectorSimilarity: hit.score });
  });
  const times = [...byMessage.values()].map((entry) => Date.parse(entry.hit.message.createdAt));
  const oldest = Math.min(...times);
  const span = Math.max(1, Math.max(...times) - oldest);
  const hits = [...byMessage.values()].map((entry): RecallHit => {
    const fused =
      (entry.keywordRank === undefined ? 0 : 1 / (rrfConstant + entry.keywordRank)) +
      (entry.vectorRank === undefined ? 0 : 1 / (rrfConstant + entry.vectorRank));
    const recency = (Date.parse(entry.hit.message.createdAt) - oldest) / span;
    const { hit, ...ranks } = entry;
    return {
      conversationId: hit.conversationId,
      message: hit.message,
      score: fused,
      explain: { ...ranks, recency, fused },
    };
  });
  return hits.sort(byScore);
}

/** Checks a tuning's ranges; throws `invalid_input` naming the field. */
export function checkRecallTuning(tuning: RecallTuning): RecallTuning {
  const ranges: Record<keyof RecallTuning, [number, number]> = {
    rrfConstant: [0, 1000],
    speakerBoost: [0, 10],
    neighbourShare: [0, 1],
    episodeShare: [0, 1],
    episodeGapMinutes: [0, 100_000],
    episodeTopHits: [0, 1000],
    episodeDiversity: [0, 1],
    timeBoost: [0, 10],
    timeSlackDays: [0, 366],
    secondHopWeight: [0, 10],
    listDiversity: [0, 1],
    listEpisodeFactor: [0, 1],
    episodeCoverage: [0, 10],
    lengthPrior: [0, 2],
    listSpeakerBoost: [0, 10],
    lengthPriorCap: [1, 32],
    echoDiscount: [0, 1],
    exchangeShare: [0, 1],
    assistantPrior: [0, 1],
    assistantChatRatio: [0, 100],
    refinerChatRatio: [0, refinerAlways],
    recencyHalfLifeDays: [0, 100_000],
    importanceBoost: [0, 10],
  };
  for (const [field, [min, max]] of Object.entries(ranges)) {
    const value = tuning[field as keyof RecallTuning];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
      throw new MemoryError('invalid_input', `tuning.${field} must be a number from ${min} to ${max}`, {
        details: { field: `tuning.${field}` },
      });
    }
  }
  return tuning;
}

// Episodes among the candidates: per conversation, in seq order, a new episode starts after a pause
// longer than the gap. Only candidates are seen, so a long quiet stretch between two candidates of one
// session is read as a pause only when it really is one in time.
function episodesOf(prepared: PreparedCandidates, gapMinutes: number): Int32Array {
  const cached = prepared.episodesByGap.get(gapMinutes);
  if (cached !== undefined) return cached;
  const { hits } = prepared;
  const sorted = hits
    .map((_, at) => at)
    .sort((a, b) =>
      hits[a]!.conversationId < hits[b]!.conversationId
        ? -1
        : hits[a]!.conversationId > hits[b]!.conversationId
          ? 1
          : hits[a]!.message.seq - hits[b]!.message.seq,
    );
  const episodes = new Int32Array(hits.length);
  let episode = -1;
  let previous: SearchHit | undefined;
  for (const at of sorted) {
    const hit = hits[at]!;
    const pause =
      previous === undefined ||
      previous.conversationId !== hit.conversationId ||
      Date.parse(hit.message.createdAt) - Date.parse(previous.message.createdAt) > gapMinutes * 60_000;
    if (pause) episode += 1;
    episodes[at] = episode;
    previous = hit;
  }
  prepared.episodesByGap.set(gapMinutes, episodes);
  return episodes;
}

function periodFlags(prepared: PreparedCandidates, slackDays: number): Uint8Array {
  let flags = prepared.inPeriodBySlack.get(slackDays);
  if (flags === undefined) {
    flags = Uint8Array.from(prepared.hits, (hit) =>
      withinPeriods(Date.parse(hit.message.createdAt), prepared.periods, slackDays) ? 1 : 0,
    );
    prepared.inPeriodBySlack.set(slackDays, flags);
  }
  return flags;
}

// Per candidate: the sum of the best `topHits` scores of the other candidates of its episode.
function episodeSupport(scores: Float64Array, episodes: Int32Array, topHits: number): Float64Array {
  const members = new Map<number, number[]>();
  episodes.forEach((episode, at) => {
    const list = members.get(episode);
    if (list === undefined) members.set(episode, [at]);
    else list.push(at);
  });
  const support = new Float64Array(scores.length);
  for (const list of members.values()) {
    if (list.length < 2) continue;
    list.sort((a, b) => scores[b]! - scores[a]!);
    for (const at of list) {
      let total = 0;
      let counted = 0;
      for (const other of list) {
        if (counted >= topHits) break;
        if (other === at) continue;
        total += scores[other]!;
        counted += 1;
      }
      support[at] = total;
    }
  }
  return support;
}

function diversify(
  order: readonly number[],
  score: Float64Array,
  episodes: Int32Array,
  diversity: number,
  k: number,
): number[] {
  const remaining = [...order];
  const picked: number[] = [];
  const perEpisode = new Map<number, number>();
  while (picked.length < k && remaining.length > 0) {
    let best = 0;
    let bestScore = -Infinity;
    remaining.forEach((at, position) => {
      const adjusted = score[at]! * (1 - diversity) ** (perEpisode.get(episodes[at]!) ?? 0);
      if (adjusted > bestScore) [best, bestScore] = [position, adjusted];
    });
    const [at] = remaining.splice(best, 1);
    picked.push(at!);
    perEpisode.set(episodes[at!]!, (perEpisode.get(episodes[at!]!) ?? 0) + 1);
  }
  return [...picked, ...remaining];
}

// The share of its answering reply's score a user turn gets (the exchange as one unit), in proportion to
// how much of the reply's match echoes the turn: a reply that repeats the user's words was found for them,
// while a reply that says something of its own (a friend's answer in a two-person chat) keeps its score.
// 0 when the next message is not an assistant reply among the candidates.
function exchangeSupport(prepared: PreparedCandidates, boosted: Float64Array, at: number, share: number): number {
  if (share === 0 || prepared.assistant[at] === 1) return 0;
  const reply = prepared.next[at]!;
  return reply < 0 || prepared.assistant[reply] !== 1 ? 0 : share * prepared.echo[reply]! * boosted[reply]!;
}

// An assistant reply's own factor: the role prior and the discount of its echo of the user's words.
function roleFactor(prepared: PreparedCandidates, at: number, tuning: RecallTuning): number {
  if (prepared.assistant[at] !== 1) return 1;
  return (1 - tuning.assistantPrior) * (1 - tuning.echoDiscount * prepared.echo[at]!);
}

/**
 * How many times as long, on average, the assistant's replies among `messages` are as the other turns
 * (by characters; 1 when either side is missing): the test of a chat whose assistant answers at length.
 */
export function messagesReplyRatio(messages: readonly { readonly role: string; readonly content: string }[]): number {
  const sums = [0, 0];
  const counts = [0, 0];
  for (const message of messages) {
    const side = message.role === 'assistant' ? 1 : 0;
    sums[side]! += message.content.length;
    counts[side]! += 1;
  }
  if (counts[0] === 0 || counts[1] === 0 || sums[0] === 0) return 1;
  return sums[1]! / counts[1]! / (sums[0]! / counts[0]!);
}

function keyOf(conversationId: string, seq: number): string {
  return `${conversationId}\u0000${seq}`;
}

function byScore(a: RecallHit, b: RecallHit): number {
  return b.score - a.score || b.explain.recency - a.explain.recency || b.message.seq - a.message.seq;
}

import type { UserScope } from '@mnemo/core';
import type { SearchHit, SearchOptions } from '@mnemo/core/store-kit';
import type { PostgresClient, PostgresPool } from './postgres-driver.js';
import { bm25, keywordQueryWords, scoreDecimals, searchKeywordIndexed } from './postgres-keyword-search.js';
import { checkK, prefixedMessageColumns, toHit, type HitRow } from './postgres-search-filters.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';

/** Most query lexemes whose combinations the pruning enumerates; a query with more is searched unpruned. */
const maxPrunedTerms = 12;
/** Most clauses one round's query may have; past it the search is unpruned. */
const maxClauses = 500;
/** Candidates few enough to score in one statement, without pruning: the terms' documents together. */
const unprunedDocuments = 5000;
/** Conjunctions round 1 tries (all the lexemes, then all but one, …) before it gives up pruning. */
const maxFirstRounds = 3;

/** One query lexeme with its statistics over the user's messages (see `keyword_terms`). */
export interface KeywordTerm {
  readonly lexeme: string;
  /** Messages holding it. */
  readonly documents: number;
  /** Most positions it has in one of them. */
  readonly maxFrequency: number;
  /** Fewest lexemes one of them has. */
  readonly minLength: number;
}

/** The corpus statistics of one user and the query's lexemes that some message of the user holds, rarest first. */
export interface KeywordTermStatistics {
  readonly totalDocuments: number;
  readonly averageLength: number;
  readonly terms: readonly KeywordTerm[];
}

/**
 * The statistics statement: the distinct lexemes of the query words (`to_tsvector('english', $3)`), each
 * with its row of `keyword_terms`, and the user's document count and average length from the conversation
 * rows, as `keywordSearchStatement` computes them. Parameters: `$1` tenant, `$2` user, `$3` the words.
 */
export function keywordTermsStatement(t: PostgresTables): string {
  return `WITH words AS (SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', $3))) AS lexeme),
    totals AS (
      SELECT coalesce(sum(c.message_count - c.erased_messages), 0)::float8 AS documents,
        coalesce(sum(c.search_length), 0)::float8 / greatest(coalesce(sum(c.message_count - c.erased_messages), 0), 1) AS average_length
      FROM ${t.conversations} c WHERE c.tenant_id = $1 AND c.user_id = $2
    )
    SELECT k.lexeme, k.documents::float8 AS term_documents, k.max_frequency, k.min_length, t.documents, t.average_length
    FROM totals t LEFT JOIN (words w JOIN ${t.keywordTerms} k ON k.tenant_id = $1 AND k.user_id = $2 AND k.lexeme = w.lexeme AND k.documents > 0) ON true`;
}

/**
 * The scoring statement: exact BM25 (the formula of `keywordSearchStatement`) of the user's messages that
 * match `$3` (a tsquery of quoted lexemes, found through `messages_search`), summed over every query lexeme
 * the message holds (`$4` the lexemes, `$5` their document frequencies), best `$8` first, ties newest
 * first. `$6` the user's document count, `$7` the average length.
 */
export function prunedKeywordScoreStatement(t: PostgresTables): string {
  const { k1, b } = bm25;
  return `WITH candidates AS (
      SELECT m.conversation_id, m.seq, m.created_at, m.search_vector FROM ${t.messages} m
      WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.search_vector @@ $3::tsquery
    ), scored AS (
      SELECT c.conversation_id, c.seq, c.created_at,
        round(sum(ln(1 + (greatest($6::float8, q.documents) - q.documents + 0.5) / (q.documents + 0.5)) * f.frequency * ${k1 + 1}
          / (f.frequency + ${k1} * (1 - ${b} + ${b} * length(c.search_vector)::float8 / greatest($7::float8, 1))))::numeric, ${scoreDecimals})::float8 AS score
      FROM candidates c
      CROSS JOIN LATERAL (SELECT v.lexeme, greatest(cardinality(v.positions), 1)::float8 AS frequency FROM unnest(c.search_vector) AS v (lexeme, positions, weights)) f
      JOIN unnest($4::text[], $5::float8[]) AS q (lexeme, documents) ON q.lexeme = f.lexeme
      GROUP BY c.conversation_id, c.seq, c.created_at
      ORDER BY score DESC, c.created_at DESC, c.seq DESC LIMIT $8
    )
    SELECT ${prefixedMessageColumns}, s.conversation_id, s.score FROM scored s
    JOIN ${t.messages} m ON m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = s.conversation_id AND m.seq = s.seq
    ORDER BY s.score DESC, s.created_at DESC, s.seq DESC`;
}

/**
 * More than `term` can add to the BM25 score of any of the user's messages: its inverse document frequency
 * times the term part at the lexeme's largest frequency and the shortest message holding it (the term part
 * grows with the frequency and shrinks with the length).
 */
export function termScoreBound(term: KeywordTerm, totalDocuments: number, averageLength: number): number {
  const { k1, b } = bm25;
  const idf = Math.log(1 + (Math.max(totalDocuments, term.documents) - term.documents + 0.5) / (term.documents + 0.5));
  const frequency = Math.max(1, term.maxFrequency);
  const part =
    (frequency * (k1 + 1)) /
    (frequency + k1 * (1 - b + (b * Math.max(0, term.minLength)) / Math.max(averageLength, 1)));
  // Margins cover the float arithmetic of SQL and the rounding of its scores to scoreDecimals.
  return idf * part * (1 + 1e-9) + 10 ** -scoreDecimals;
}

/**
 * The smallest sets of terms (as indexes into `bounds`) whose bounds add up to more than `threshold`: a
 * message holding no such set scores at most `threshold`, so it cannot beat `k` hits that score at least
 * that. `undefined` when there would be more than {@link maxClauses}.
 */
export function qualifyingTermSets(bounds: readonly number[], threshold: number): number[][] | undefined {
  const sets: number[][] = [];
  const visit = (start: number, chosen: number[], sum: number): boolean => {
    for (let index = start; index < bounds.length; index += 1) {
      const next = [...chosen, index];
      const total = sum + bounds[index]!;
      if (total > threshold) {
        // Minimal only if no smaller set inside it qualifies: dropping any one earlier member falls short.
        if (next.every((_, position) => total - bounds[next[position]!]! <= threshold || position === next.length - 1))
          sets.push(next);
        if (sets.length > maxClauses) return false;
      } else if (!visit(index + 1, next, total)) return false;
    }
    return true;
  };
  return visit(0, [], 0) ? sets : undefined;
}

/** A tsquery text of quoted lexemes: `('a' & 'b') | ('c')`. */
export function termSetsQuery(terms: readonly KeywordTerm[], sets: readonly (readonly number[])[]): string {
  const quote = (lexeme: string) => `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
  return sets.map((set) => `(${set.map((index) => quote(terms[index]!.lexeme)).join(' & ')})`).join(' | ');
}

/**
 * Keyword search with top-k pruning: exact BM25, the same hits and scores as the unpruned statement, but
 * without reading every message that holds a common query word. Round 1 scores the messages holding all
 * the query's lexemes, or all but one, or all but two (the first of these that `k` messages match); its
 * k-th score is a threshold. Round 2 scores only the other
 * messages holding a set of lexemes whose score bounds (`keyword_terms`: document frequency, largest
 * frequency, shortest message) add up to more than the threshold: any message outside both scores less
 * than `k` hits already found. The two rounds' best are merged. The statistics and every round read one
 * REPEATABLE READ snapshot. The query's messages are scored in one unpruned round when they are few
 * (5,000 together), when round 1 finds fewer than `k`, or past 12 distinct lexemes; searches with
 * conversation or time filters use the unpruned statement.
 */
export async function searchKeywordPruned(
  pool: PostgresPool,
  t: PostgresTables,
  user: UserScope,
  terms: readonly string[],
  options: SearchOptions,
): Promise<SearchHit[]> {
  if (options.conversationIds !== undefined || options.since !== undefined || options.until !== undefined)
    return searchKeywordIndexed(pool, t, user, terms, options);
  const k = checkK(options.k);
  const words = keywordQueryWords(terms);
  if (words.length === 0) return [];
  return runInTransaction(
    pool,
    async (client) => {
      const statistics = await readTermStatistics(client, t, user, words);
      const found = statistics.terms;
      if (found.length === 0) return [];
      const score = async (query: string) =>
        (
          await client.query<HitRow>(prunedKeywordScoreStatement(t), [
            user.tenantId,
            user.userId,
            query,
            found.map((term) => term.lexeme),
            found.map((term) => term.documents),
            statistics.totalDocuments,
            statistics.averageLength,
            k,
          ])
        ).rows.map(toHit);
      const single = found.map((_, index) => [index]);
      const documents = found.reduce((sum, term) => sum + term.documents, 0);
      if (found.length > maxPrunedTerms || documents <= unprunedDocuments) return score(termSetsQuery(found, single));
      // Round 1: the messages holding at least `size` of the lexemes, the most specific size that matches k.
      let first: number[][] = single;
      let firstHits: SearchHit[] = [];
      for (
        let size = found.length, rounds = 0;
        size > 1 && rounds < maxFirstRounds && firstHits.length < k;
        size -= 1
      ) {
        const sets = combinations(found.length, size);
        if (sets.length > maxClauses) continue;
        first = sets;
        firstHits = await score(termSetsQuery(found, first));
        rounds += 1;
      }
      if (firstHits.length < k) return score(termSetsQuery(found, single));
      const bounds = found.map((term) => termScoreBound(term, statistics.totalDocuments, statistics.averageLength));
      const sets = qualifyingTermSets(bounds, firstHits[k - 1]!.score);
      if (sets === undefined) return score(termSetsQuery(found, single));
      if (sets.every((set) => first.some((held) => held.every((index) => set.includes(index))))) return firstHits;
      // Round 1's messages are scored already: round 2 reads the others.
      const rest = await score(`(${termSetsQuery(found, sets)}) & !(${termSetsQuery(found, first)})`);
      return [...firstHits, ...rest].sort(byScoreThenNewest).slice(0, k);
    },
    { begin: 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY' },
  );
}

/** Every set of `size` of the indexes 0 … count − 1, in lexicographic order. */
export function combinations(count: number, size: number): number[][] {
  if (size === 0) return [[]];
  const sets: number[][] = [];
  for (let last = size - 1; last < count; last += 1)
    for (const head of combinations(last, size - 1)) sets.push([...head, last]);
  return sets;
}

/** The order of the search statements: best score first, then the newest message (time, then seq). */
function byScoreThenNewest(a: SearchHit, b: SearchHit): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.message.createdAt !== b.message.createdAt) return a.message.createdAt < b.message.createdAt ? 1 : -1;
  return b.message.seq - a.message.seq;
}

async function readTermStatistics(
  client: PostgresClient,
  t: PostgresTables,
  user: UserScope,
  words: readonly string[],
): Promise<KeywordTermStatistics> {
  const rows = (
    await client.query<{
      lexeme: string | null;
      term_documents: number;
      max_frequency: number;
      min_length: number;
      documents: number;
      average_length: number;
    }>(keywordTermsStatement(t), [user.tenantId, user.userId, words.join(' ')])
  ).rows;
  const terms = rows
    .filter((row) => row.lexeme !== null)
    .map((row) => ({
      lexeme: row.lexeme!,
      documents: Number(row.term_documents),
      maxFrequency: Number(row.max_frequency),
      minLength: Number(row.min_length),
    }))
    .sort((a, b) => a.documents - b.documents || (a.lexeme < b.lexeme ? -1 : 1));
  return {
    totalDocuments: Number(rows[0]?.documents ?? 0),
    averageLength: Number(rows[0]?.average_length ?? 0),
    terms,
  };
}

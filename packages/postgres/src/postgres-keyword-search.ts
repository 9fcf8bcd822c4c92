import type { UserScope } from '@mnemo/core';
import { keywordBm25, keywordScoreDecimals, type SearchHit, type SearchOptions } from '@mnemo/core/store-kit';
import type { PostgresQueryable } from './postgres-driver.js';
import { checkK, prefixedMessageColumns, searchFilters, toHit, type HitRow } from './postgres-search-filters.js';
import type { PostgresTables } from './postgres-tables.js';

/** Okapi BM25 parameters: core's, which the in-memory keyword copies use too. */
export const bm25 = keywordBm25;
const { k1, b } = bm25;

/**
 * Decimals a BM25 score is rounded to in SQL (core's, as the in-memory copies round): the sum's float
 * rounding depends on the order the plan adds a message's terms in, so equal scores would otherwise differ
 * in the last bits and tie-break (newest first) by accident, differently in the pruned and the unpruned
 * statements.
 */
export const scoreDecimals = keywordScoreDecimals;

/** Letter and digit runs of the terms: the only operands put into a `to_tsquery` text, so none can be an operator. */
export function keywordQueryWords(terms: readonly string[]): string[] {
  return terms.flatMap((term) => term.match(/[\p{L}\p{N}]+/gu) ?? []);
}

/**
 * The keyword search statement: BM25 over the messages that `messages_search` (GIN) finds for
 * `search_vector @@ to_tsquery('english', $3)` (the OR of the words), for one user and the filters. Corpus
 * statistics come from the user's conversation rows (`message_count`, `search_length`), not from a scan:
 * the document count and the average document length (distinct lexemes) of the user's messages, or of the
 * listed conversations; time filters narrow the candidates but not these statistics. Term frequency is
 * the number of positions of the lexeme in the message, document frequency the number of candidates
 * holding it. Parameters: `$1` tenant, `$2` user, `$3` OR query text, `$4` the words, `$5` k, then the filters.
 */
export function keywordSearchStatement(
  t: PostgresTables,
  options: SearchOptions,
): { text: string; filterParameters: unknown[] } | undefined {
  const filter = searchFilters(options, 5, 'm');
  if (filter === undefined) return undefined;
  const conversationFilter = options.conversationIds === undefined ? '' : 'AND c.conversation_id = ANY($6::text[])';
  const text = `WITH totals AS (
      SELECT coalesce(sum(c.message_count - c.erased_messages), 0)::float8 AS documents,
        coalesce(sum(c.search_length), 0)::float8 / greatest(coalesce(sum(c.message_count - c.erased_messages), 0), 1) AS average_length
      FROM ${t.conversations} c WHERE c.tenant_id = $1 AND c.user_id = $2 ${conversationFilter}
    ), candidates AS (
      SELECT m.conversation_id, m.seq, m.created_at, m.search_vector FROM ${t.messages} m
      WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.search_vector @@ to_tsquery('english', $3) ${filter.clause}
    ), matches AS (
      SELECT c.conversation_id, c.seq, c.created_at, length(c.search_vector)::float8 AS length, v.lexeme,
        greatest(cardinality(v.positions), 1)::float8 AS frequency
      FROM candidates c CROSS JOIN LATERAL unnest(c.search_vector) AS v (lexeme, positions, weights)
      WHERE v.lexeme = ANY (tsvector_to_array(to_tsvector('english', $4)))
    ), frequencies AS (
      SELECT lexeme, count(*)::float8 AS documents FROM matches GROUP BY lexeme
    ), scored AS (
      SELECT m.conversation_id, m.seq, m.created_at,
        round(sum(ln(1 + (greatest(t.documents, f.documents) - f.documents + 0.5) / (f.documents + 0.5)) * m.frequency * ${k1 + 1}
          / (m.frequency + ${k1} * (1 - ${b} + ${b} * m.length / greatest(t.average_length, 1))))::numeric, ${scoreDecimals})::float8 AS score
      FROM matches m JOIN frequencies f USING (lexeme) CROSS JOIN totals t
      GROUP BY m.conversation_id, m.seq, m.created_at
      ORDER BY score DESC, m.created_at DESC, m.seq DESC LIMIT $5
    )
    SELECT ${prefixedMessageColumns}, s.conversation_id, s.score FROM scored s
    JOIN ${t.messages} m ON m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = s.conversation_id AND m.seq = s.seq
    ORDER BY s.score DESC, s.created_at DESC, s.seq DESC`;
  return { text, filterParameters: filter.parameters };
}

/** Runs {@link keywordSearchStatement}: a user's messages matching any of the terms, best BM25 first, ties newest first. */
export async function searchKeywordIndexed(
  queryable: PostgresQueryable,
  t: PostgresTables,
  user: UserScope,
  terms: readonly string[],
  options: SearchOptions,
): Promise<SearchHit[]> {
  const k = checkK(options.k);
  const words = keywordQueryWords(terms);
  if (words.length === 0) return [];
  const statement = keywordSearchStatement(t, options);
  if (statement === undefined) return [];
  const parameters = [user.tenantId, user.userId, words.join(' | '), words.join(' '), k, ...statement.filterParameters];
  return (await queryable.query<HitRow>(statement.text, parameters)).rows.map(toHit);
}

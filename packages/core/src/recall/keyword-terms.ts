// English function words (and question words) that carry no topic: dropped from keyword queries so
// an OR query is not dominated by "what", "the" and "did". Other languages' words pass through.
const stopwords = new Set(
  `a about above after again against all am an and any are aren't as at be because been before being below between both but by can
  could did didn't do does doesn't doing don't down during each few for from further had has have having he her here hers herself him
  himself his how i if in into is isn't it it's its itself just let's me more most my myself no nor not now of off on once only or other
  our ours ourselves out over own same she should so some such than that that's the their theirs them themselves then there these they
  this those through to too under until up very was wasn't we were weren't what what's when where which while who whom why will with
  would you your yours yourself yourselves ever also get got go going like really yes yeah ok okay oh`.split(/\s+/),
);

/** Most terms a keyword query keeps (longest first), so a pasted paragraph cannot make a huge query. */
export const maxKeywordTerms = 32;

/**
 * The search terms of a query: lower-cased letter/digit runs, without English stopwords and
 * duplicates, at most {@link maxKeywordTerms}. Stores OR them together and rank by BM25.
 */
export function keywordTerms(query: string): string[] {
  const words =
    query
      .toLowerCase()
      .normalize('NFKC')
      .match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? [];
  const terms = [
    ...new Set(words.map((word) => word.replace(/'s$/, '')).filter((word) => word.length > 1 && !stopwords.has(word))),
  ];
  return terms.length <= maxKeywordTerms
    ? terms
    : [...terms].sort((a, b) => b.length - a.length).slice(0, maxKeywordTerms);
}

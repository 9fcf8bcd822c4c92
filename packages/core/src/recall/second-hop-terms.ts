import { keywordTerms, maxKeywordTerms } from './keyword-terms.js';
import type { SearchHit } from './search.js';
import { nameTerms } from './speaker-terms.js';

/** Words a second-hop query takes from each first hit at most (its longest: names and nouns before short words). */
export const secondHopTermsPerHit = 8;

/**
 * The keyword query of a second hop: the query's topic terms, then the words of the first hits
 * (`seeds`, best first) that the query does not have — their names, places and things, so a turn that
 * mentions what the first hits are about is found even when it shares no word with the question
 * ("Where did she move from?" → the first hit says "Sweden" → a turn about Sweden). Speaker names are
 * left out, as in the first search. At most {@link maxKeywordTerms} terms.
 */
export function secondHopTerms(
  topicTerms: readonly string[],
  speakers: ReadonlySet<string>,
  seeds: readonly SearchHit[],
): string[] {
  const terms = new Set(topicTerms);
  const known = new Set([...topicTerms, ...speakers, ...seeds.flatMap((seed) => nameTerms(seed.message))]);
  for (const seed of seeds) {
    const words = keywordTerms(seed.message.content).filter((word) => !known.has(word) && word.length > 2);
    for (const word of [...words].sort((a, b) => b.length - a.length).slice(0, secondHopTermsPerHit)) terms.add(word);
  }
  return [...terms].slice(0, maxKeywordTerms);
}

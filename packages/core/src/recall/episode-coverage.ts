// A crude stem, so that "camped" meets "camping" the way the stores' stemmed keyword search does.
function stem(term: string): string {
  return term.length <= 4 ? term : term.replace(/(?:ing|ed|es|s|ly)$/u, '').slice(0, 7);
}

/**
 * Which of the query's terms (at most 32) a text's words (its `keywordTerms`) contain, as a bit mask:
 * bit i for `terms[i]`, words compared by a crude stem.
 */
export function termMask(words: readonly string[], terms: readonly string[]): number {
  if (terms.length === 0) return 0;
  const stems = new Set(words.map(stem));
  let mask = 0;
  terms.slice(0, 32).forEach((term, bit) => {
    if (stems.has(stem(term))) mask |= 1 << bit;
  });
  return mask >>> 0;
}

/**
 * Per candidate: the share (0–1) of the query's terms that the candidates of its episode contain
 * between them — the episode read as one document, the way a session-level retrieval unit matches a
 * question whose words are spread over several turns of one session. 0 for a query of fewer than 2 terms.
 */
export function episodeCoverage(masks: Uint32Array, episodes: Int32Array, termCount: number): Float64Array {
  const coverage = new Float64Array(masks.length);
  const terms = Math.min(32, termCount);
  if (terms < 2) return coverage;
  const union = new Map<number, number>();
  episodes.forEach((episode, at) => union.set(episode, ((union.get(episode) ?? 0) | masks[at]!) >>> 0));
  episodes.forEach((episode, at) => {
    coverage[at] = bitCount(union.get(episode)!) / terms;
  });
  return coverage;
}

function bitCount(mask: number): number {
  let count = 0;
  for (let rest = mask; rest !== 0; rest &= rest - 1) count += 1;
  return count;
}

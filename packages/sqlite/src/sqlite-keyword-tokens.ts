import { stemmer } from 'stemmer';

// The words of a text as the keyword index counts them (decision 0027), chosen to split as FTS5's
// `porter unicode61 remove_diacritics 2` did before it: runs of letters, digits and private-use
// characters (with the marks inside them), lower-cased, Latin diacritics removed, ASCII words Porter
// stemmed. On LoCoMo's and the mesh-chat generator's 1.3 million words the two differ only at two emoji,
// which FTS5 counted as letters (code points newer than its Unicode tables); FTS5 also stems non-ASCII
// words byte by byte ("straße" to "straß"), which this leaves whole. No query term names an emoji
// (see `keywordTerms`).
const wordPattern = /[\p{L}\p{N}\p{Co}][\p{L}\p{N}\p{M}\p{Co}]*/gu;
const latinMarks = /(\p{Script=Latin})\p{M}+/gu;
// eslint-disable-next-line no-control-regex -- all of ASCII, from NUL on purpose
const nonAscii = /[^\u0000-\u007f]/;
const stemmable = /^[a-z0-9]{3,64}$/;
/** Distinct words whose stems are remembered; past it the memo starts again (a bound, not a tuning). */
const memoWords = 200_000;
const stems = new Map<string, string>();

function stem(word: string): string {
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    stemmed = stemmable.test(word) ? stemmer(word) : word;
    if (stems.size >= memoWords) stems.clear();
    stems.set(word, stemmed);
  }
  return stemmed;
}

/** The index words of a text, in order (repeats kept). */
export function keywordTokens(text: string): string[] {
  let folded = text.toLowerCase();
  // Diacritics go from Latin letters only ("résumé" is "resume"); other scripts keep their marks. A
  // final sigma is a sigma, as case folding has it.
  if (nonAscii.test(folded))
    folded = folded.normalize('NFD').replace(latinMarks, '$1').normalize('NFC').replace(/ς/g, 'σ');
  const words = folded.match(wordPattern) ?? [];
  return words.map(stem);
}

import type { LocomoSample } from './parse-locomo-dataset.js';

// A common English stopword list (NLTK's, apostrophes dropped); BASELINES.md does not publish its own,
// which is why this BM25 lands within 0.2 points of the published figures rather than on them.
const stopwords = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself they them their theirs ' +
    'themselves what which who whom this that these those am is are was were be been being have has had having do does did doing a an the and but if or ' +
    'because as until while of at by for with about against between into through during before after above below to from up down in out on off over ' +
    'under again further then once here there when where why how all any both each few more most other some such no nor not only own same so than too ' +
    'very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn'
  ).split(' '),
);

/** BASELINES.md's tokenizer: lower case, NFKD with the marks dropped, split on non-alphanumerics, stopwords out, no stemming. */
export function bm25Tokens(text: string): string[] {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((token) => token !== '' && !stopwords.has(token));
}

/**
 * LoCoMo's BM25 baseline, rebuilt from BASELINES.md's method so every fold can be compared with it: one
 * document per turn (speaker + text + caption), Okapi k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5) /
 * (df + 0.5)), ties broken by chronological order. Returns a ranker for the sample's questions.
 */
export function createBm25Ranker(sample: LocomoSample): (question: string, depth: number) => string[] {
  const documents = sample.turns.map((turn) =>
    bm25Tokens(`${turn.speaker} ${turn.content.replace('[shared image: ', '').replace(/\]$/, '')}`),
  );
  const averageLength = documents.reduce((sum, tokens) => sum + tokens.length, 0) / Math.max(1, documents.length);
  const frequencies = documents.map((tokens) => {
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    return counts;
  });
  const documentFrequency = new Map<string, number>();
  for (const counts of frequencies)
    for (const token of counts.keys()) documentFrequency.set(token, (documentFrequency.get(token) ?? 0) + 1);
  const count = documents.length;
  return (question, depth) => {
    const terms = bm25Tokens(question);
    const scores = frequencies.map((counts, index) => {
      let score = 0;
      for (const term of terms) {
        const frequency = counts.get(term);
        if (frequency === undefined) continue;
        const df = documentFrequency.get(term)!;
        const idf = Math.log(1 + (count - df + 0.5) / (df + 0.5));
        score +=
          (idf * frequency * 2.2) / (frequency + 1.2 * (0.25 + (0.75 * documents[index]!.length) / averageLength));
      }
      return { index, score };
    });
    return scores
      .filter((entry) => entry.score > 0)
      .sort((a, b) => b.score - a.score || a.index - b.index)
      .slice(0, depth)
      .map((entry) => sample.turns[entry.index]!.diaId);
  };
}

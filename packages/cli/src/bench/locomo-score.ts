import type { BuiltContext } from '@mnemo/core';

/**
 * Fraction (0–1) of the evidence turn ids found among the first `k` ids of `ranking` (best first): the
 * LoCoMo paper's "recall accuracy" and the baseline tool's frac@k. Every id counts once.
 */
export function evidenceFractionAt(ranking: readonly string[], evidence: readonly string[], k: number): number {
  const wanted = new Set(evidence);
  if (wanted.size === 0) return 0;
  const top = new Set(ranking.slice(0, k));
  return [...wanted].filter((id) => top.has(id)).length / wanted.size;
}

/** True when every evidence id is among the first `k` of `ranking` (the baseline's all@k). */
export function allEvidenceAt(ranking: readonly string[], evidence: readonly string[], k: number): boolean {
  const top = new Set(ranking.slice(0, k));
  return evidence.length > 0 && evidence.every((id) => top.has(id));
}

/** True when at least one evidence id is among the first `k` of `ranking` (the baseline's any@k). */
export function anyEvidenceAt(ranking: readonly string[], evidence: readonly string[], k: number): boolean {
  const top = new Set(ranking.slice(0, k));
  return evidence.some((id) => top.has(id));
}

// Function words that carry no content of an answer ("the", "in", "and"). Month names such as "may"
// stay: dates are answers.
const stopwords = new Set(
  `a an the and or but if of at by for with about against between into through during before after above below to from up down in out on
  off over under again further then once here there when where why how all any both each few more most other some such no nor not only own
  same so than too very s t can will just don should now is are was were be been being have has had having do does did doing i me my myself
  we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself they them their theirs
  themselves what which who whom this that these those am would could also as`.split(/\s+/),
);

/**
 * The content words of a text: lower-cased, accents stripped, split on anything that is not a letter or
 * digit, stopwords dropped, and a plural `s` removed (`books` → `book`, not `class`), so "painting" and
 * "paintings" match but "paint" and "painting" do not.
 */
export function contentWords(text: string): string[] {
  const words = text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u);
  return words
    .filter((word) => word.length > 0 && !stopwords.has(word))
    .map((word) => (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word));
}

/**
 * Fraction (0–1) of the distinct content words of `answer` that occur anywhere in `contextWords`;
 * `undefined` when the answer has no content word (nothing to look for).
 */
export function answerWordsPresent(answer: string, contextWords: ReadonlySet<string>): number | undefined {
  const wanted = new Set(contentWords(answer));
  if (wanted.size === 0) return undefined;
  return [...wanted].filter((word) => contextWords.has(word)).length / wanted.size;
}

/** Every content word of a context: message contents and speaker names. */
export function contextWordSet(context: BuiltContext): Set<string> {
  return new Set(context.messages.flatMap((message) => contentWords(`${message.name ?? ''} ${message.content}`)));
}

/** A stored turn as the evidence check sees it. */
export interface StoredTurn {
  readonly diaId: string;
  readonly content: string;
}

/**
 * The turns a context holds verbatim, by turn id. A turn counts when (1) the report places it in the
 * context — its seq is inside the `recent` part's range, or it is an item of the `recalled` part of the
 * same conversation — and (2) its whole stored content appears character for character in one message
 * of the context. (2) rules out a recent message cut to fit and a recalled snippet cut short; a turn
 * that only survives paraphrased in the summary does not count.
 */
export function turnsPresent(
  context: BuiltContext,
  conversationId: string,
  turnsBySeq: ReadonlyMap<number, StoredTurn>,
): Set<string> {
  const seqs = new Set<number>();
  for (const part of context.report.parts) {
    if (part.kind === 'recent' && part.seqRange !== undefined) {
      for (let seq = part.seqRange.from; seq <= part.seqRange.to; seq += 1) seqs.add(seq);
    }
    if (part.kind === 'recalled') {
      for (const item of part.items ?? [])
        if (item.conversationId === conversationId && item.seq !== undefined) seqs.add(item.seq);
    }
  }
  const present = new Set<string>();
  for (const seq of seqs) {
    const turn = turnsBySeq.get(seq);
    if (turn !== undefined && context.messages.some((message) => message.content.includes(turn.content)))
      present.add(turn.diaId);
  }
  return present;
}

/** Fraction (0–1) of the evidence ids in `present`. */
export function evidencePresent(evidence: readonly string[], present: ReadonlySet<string>): number {
  const wanted = new Set(evidence);
  return wanted.size === 0 ? 0 : [...wanted].filter((id) => present.has(id)).length / wanted.size;
}

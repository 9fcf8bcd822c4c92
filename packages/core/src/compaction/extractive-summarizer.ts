import type { MessageRole } from '../messages/message.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { compressSentence, scoreSentence } from './score-sentence.js';
import { buildSummarizePrompt } from './summarize-prompt.js';
import type { SummarizeInput, SummarizeResult, Summarizer } from './summarizer.js';

/** Options of {@link ExtractiveSummarizer}. */
export interface ExtractiveSummarizerOptions {
  readonly tokenCounter: TokenCounter;
  /** Longest sentence kept whole, in tokens; longer ones are cut with "…". Default 60. */
  readonly maxSentenceTokens?: number;
}

interface Candidate {
  /** Day the sentence was said (`YYYY-MM-DD`), or '' when unknown (free text of an older summary). */
  readonly date: string;
  /** Who said it (`user`, `assistant`, a name), or '' for free text. */
  readonly speaker: string;
  /** Sentences of one message (or one line of the previous summary) share a group and a line. */
  readonly group: string;
  readonly order: readonly [number, number, number];
  readonly text: string;
  readonly tokens: number;
  readonly priority: number;
  /** `scoreSentence` of the sentence (the carried bonus included), before the per-token and repeat discounts. */
  readonly score: number;
  readonly words: ReadonlySet<string>;
  /** A fact of `input.keep` (a `- fact` line): not a routine update, never left out for repeating one. */
  readonly kept: boolean;
  /**
   * Chosen in this order, best priority first within each: 0 = a kept fact the previous summary
   * already carries, 1 = a new kept fact, 2 = everything else. Facts recorded once stay put (no
   * churn as newer chatter arrives); new facts take the room left; other sentences the rest.
   */
  readonly rank: 0 | 1 | 2;
}

const dateLine = /^\[(\d{4}-\d{2}-\d{2})\]$/;
const speakerLine = /^([^\s:]{1,40}): (.*)$/;
// Facts already in the summary win against new sentences of similar worth: churn loses information,
// and a sentence that survived earlier folds was already judged worth keeping.
const carriedBonus = 1.25;
// Two sentences with this much of their wording (numbers aside) in common are the same template.
const templateSimilarity = 0.6;
const duplicateSimilarity = 0.8;
// A sentence worth less than this (no number, name, id, date or self-disclosure: "Loud and clear.",
// "you there?") is left out even when there is room: a summary is resent with every request, so filler
// in it costs every request after, and an early summary that is not padded leaves room for later facts.
const minSentenceScore = 1.5;
// A clause below this (scored as if the user said it) is dropped from a sentence that has a stronger one.
const minClauseScore = 2;
// Rough cost of a `[YYYY-MM-DD]` header line, used while choosing; the final render is counted exactly.
const dateHeaderTokens = 8;

/**
 * The offline summarizer: no LLM. It splits the previous summary and the new messages into sentences,
 * scores them (names, numbers, dates, ids, amounts, preferences and commitments up; greetings and small
 * talk out), keeps the best that fit `maxSummaryTokens`, and writes them back in chronological order
 * under `[YYYY-MM-DD]` headers as `speaker: sentence …` lines. Sentences keep the words and language
 * they were said in. Facts given in `input.keep` come first, as `- fact` lines (a kept one stays until
 * it is superseded); sentences that only repeat them, and those that repeat `input.drop`, are left out
 * (decision 0022). Deterministic: the same input gives the same summary.
 */
export class ExtractiveSummarizer implements Summarizer {
  readonly id = 'extractive@1';
  readonly #counter: TokenCounter;
  readonly #maxSentenceTokens: number;
  readonly #segmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });

  constructor(options: ExtractiveSummarizerOptions) {
    this.#counter = options.tokenCounter;
    this.#maxSentenceTokens = options.maxSentenceTokens ?? 60;
  }

  async summarize(input: SummarizeInput): Promise<SummarizeResult> {
    const dropped = (input.drop ?? []).map((statement) => wordSet(dropWeakClauses(compressSentence(statement))));
    const previous = this.#previousCandidates(input.previousSummary ?? '');
    const kept = this.#keptCandidates(input, previous);
    const keptWords = new Set(kept.flatMap((candidate) => [...candidate.words]));
    const candidates = [...kept, ...previous, ...this.#messageCandidates(input)].filter((candidate) => {
      if (candidate.kept) return true;
      if (dropped.some((words) => similarity(words, candidate.words) >= duplicateSimilarity)) return false;
      // A sentence whose every name, number and id the kept facts already state ("I'm Rosa, callsign
      // ZL3KMG." beside "- name: Rosa", "- callsign: ZL3KMG") would say it twice.
      const keys = keyWords(candidate.text);
      return keys.size === 0 || [...keys].some((word) => !keptWords.has(word));
    });
    const chosen = this.#choose(candidates, input.maxSummaryTokens);
    const content = this.#render(chosen, input.maxSummaryTokens);
    const prompt = buildSummarizePrompt(input);
    const inputTokens = prompt.reduce(
      (sum, message) => sum + this.#counter.countMessage({ role: message.role, content: message.content ?? '' }),
      this.#counter.requestOverheadTokens,
    );
    return { content, summarizer: this.id, inputTokens, outputTokens: this.#counter.countText(content) };
  }

  #previousCandidates(summary: string): Candidate[] {
    let date = '';
    return summary
      .split('\n')
      .map((line) => line.trim())
      .flatMap((line, lineIndex) => {
        const header = dateLine.exec(line);
        if (header !== null) date = header[1]!;
        if (header !== null || line.length === 0) return [];
        const match = speakerLine.exec(line);
        const speaker = match?.[1] ?? '';
        return this.#sentences(match?.[2] ?? line).map((sentence, index) =>
          this.#candidate(
            date,
            speaker,
            `p${lineIndex}`,
            [0, lineIndex, index],
            sentence,
            scoreSentence(sentence, roleOf(speaker)) * carriedBonus,
          ),
        );
      });
  }

  /**
   * The facts to keep, one `- fact` line each, dated like the message that said them and ranked ahead
   * of every sentence: first those the previous summary already carries (a fact once kept stays until
   * it is superseded), then new ones while there is room.
   */
  #keptCandidates(input: SummarizeInput, previous: readonly Candidate[]): Candidate[] {
    const keep = input.keep ?? [];
    return keep.flatMap((statement, index) => {
      const line = `- ${statement.text.replace(/\s+/g, ' ').trim()}`;
      if (line === '- ') return [];
      const tokens = this.#counter.countText(line) + 1;
      const score = Math.max(scoreSentence(line, 'user'), minSentenceScore);
      const words = wordSet(line);
      const carried = previous.some((other) => similarity(other.words, words) >= duplicateSimilarity);
      const date = statement.createdAt.slice(0, 10);
      return [
        {
          date,
          speaker: '',
          group: `k${index}`,
          order: [1, statement.seq, index - keep.length],
          text: line,
          tokens,
          score,
          priority: score / Math.sqrt(tokens),
          words,
          kept: true,
          rank: carried ? 0 : 1,
        } satisfies Candidate,
      ];
    });
  }

  #messageCandidates(input: SummarizeInput): Candidate[] {
    return input.messages.flatMap((message) =>
      this.#sentences(message.content).map((sentence, index) =>
        this.#candidate(
          message.createdAt.slice(0, 10),
          message.name ?? message.role,
          `m${message.seq}`,
          [1, message.seq, index],
          sentence,
          scoreSentence(sentence, message.role),
        ),
      ),
    );
  }

  #sentences(text: string): string[] {
    const sentences: string[] = [];
    for (const paragraph of text.split(/\n+/)) {
      let pending = '';
      for (const { segment } of this.#segmenter.segment(paragraph)) {
        pending += segment;
        // A real sentence end is followed by white space; "node !a3f9" or "v1.2" is not one.
        if (/\s$/.test(segment)) {
          sentences.push(compressSentence(pending));
          pending = '';
        }
      }
      sentences.push(compressSentence(pending));
    }
    return sentences.filter((sentence) => sentence.length > 0);
  }

  #candidate(
    date: string,
    speaker: string,
    group: string,
    order: Candidate['order'],
    sentence: string,
    score: number,
  ): Candidate {
    let text = dropWeakClauses(sentence);
    if (this.#counter.countText(text) > this.#maxSentenceTokens)
      text = `${this.#counter.truncateText(text, this.#maxSentenceTokens - 1)}…`;
    const tokens = this.#counter.countText(text) + 1;
    // Denser sentences win: the budget is in tokens, so rank by worth per token, damped for short ones.
    return {
      date,
      speaker,
      group,
      order,
      text,
      tokens,
      score,
      priority: score / Math.sqrt(tokens),
      words: wordSet(text),
      kept: false,
      rank: 2,
    };
  }

  /**
   * {@link #select}, then leaves out a kept fact whose names and numbers a chosen sentence already says,
   * and refills the room it frees (which may bring in a sentence that states another: a few rounds at most).
   */
  #choose(candidates: readonly Candidate[], maxTokens: number): Candidate[] {
    let pool = candidates;
    let chosen = this.#select(pool, maxTokens);
    for (let round = 0; round < 4; round += 1) {
      const sentences = chosen.filter((candidate) => !candidate.kept);
      const redundant = new Set(chosen.filter((candidate) => candidate.kept && isStatedBy(candidate, sentences)));
      if (redundant.size === 0) break;
      pool = pool.filter((candidate) => !redundant.has(candidate));
      chosen = this.#select(pool, maxTokens);
    }
    return chosen;
  }

  #select(candidates: readonly Candidate[], maxTokens: number): Candidate[] {
    const ranked = discountRepeats(candidates)
      .filter((candidate) => candidate.priority > 0 && candidate.score >= minSentenceScore)
      .sort((a, b) => a.rank - b.rank || b.priority - a.priority || compareOrder(b.order, a.order));
    const chosen: Candidate[] = [];
    const groups = new Set<string>();
    const dates = new Set<string>();
    let used = 0;
    for (const candidate of ranked) {
      if (chosen.some((other) => similarity(other.words, candidate.words) >= duplicateSimilarity)) continue;
      let cost = candidate.tokens;
      if (!groups.has(candidate.group) && candidate.speaker !== '')
        cost += this.#counter.countText(`${candidate.speaker}: `) + 1;
      if (!dates.has(candidate.date) && candidate.date !== '') cost += dateHeaderTokens;
      if (used + cost > maxTokens) continue;
      chosen.push(candidate);
      groups.add(candidate.group);
      dates.add(candidate.date);
      used += cost;
    }
    return chosen;
  }

  /** Writes the chosen sentences in chronological order; drops the weakest until the text fits. */
  #render(chosen: Candidate[], maxTokens: number): string {
    // By day first: a kept fact is placed under the day it was said, beside the carried lines of that day.
    const ordered = [...chosen].sort((a, b) =>
      a.date === b.date ? compareOrder(a.order, b.order) : a.date < b.date ? -1 : 1,
    );
    for (;;) {
      const text = renderLines(ordered);
      if (ordered.length === 0 || this.#counter.countText(text) <= maxTokens) return text;
      const weakest = ordered.reduce((low, candidate) =>
        candidate.rank > low.rank || (candidate.rank === low.rank && candidate.priority < low.priority)
          ? candidate
          : low,
      );
      ordered.splice(ordered.indexOf(weakest), 1);
    }
  }
}

/**
 * Leaves out the comma- or semicolon-separated clauses of a sentence that carry nothing on their own
 * ("…, it sits on the porch roof", "…, remind me if it comes up") when another clause does: the summary
 * keeps the statement and spends its tokens on more of them. A sentence with no strong clause stays whole.
 */
function dropWeakClauses(sentence: string): string {
  const clauses = sentence.split(/(?<=[,;])\s+/);
  if (clauses.length < 2) return sentence;
  const strong = clauses.map((clause) => scoreSentence(clause.replace(/[,;]$/, ''), 'user') >= minClauseScore);
  if (!strong.some(Boolean) || strong.every(Boolean)) return sentence;
  const kept = clauses.filter((_, index) => strong[index]).join(' ');
  return kept.replace(/[,;]$/, '') + (/[.!?]$/.test(sentence) && !/[.!?]$/.test(kept) ? sentence.slice(-1) : '');
}

function renderLines(kept: readonly Candidate[]): string {
  const lines: string[] = [];
  let date = '';
  let group = '';
  for (const candidate of kept) {
    if (candidate.date !== '' && candidate.date !== date) {
      lines.push(`[${candidate.date}]`);
      date = candidate.date;
      group = '';
    }
    if (candidate.group === group) lines[lines.length - 1] += ` ${candidate.text}`;
    else lines.push(candidate.speaker === '' ? candidate.text : `${candidate.speaker}: ${candidate.text}`);
    group = candidate.group;
  }
  return lines.join('\n');
}

/**
 * Divides the priority of sentences that repeat one template ("at X, ETA camp 14:20", daily signal
 * logs) by 1 + log2(how often it recurs), so a fact said once is not crowded out by routine updates.
 * Numbers are ignored when comparing wording: routine updates differ mostly in their numbers. Kept
 * facts are neither discounted nor counted: they repeat the sentence they were read from.
 */
function discountRepeats(candidates: readonly Candidate[]): Candidate[] {
  const shapes = candidates.map((candidate) => new Set([...candidate.words].filter((word) => !/\d/.test(word))));
  return candidates.map((candidate, index) => {
    if (candidate.kept) return candidate;
    let recurrences = 0;
    shapes.forEach((shape, other) => {
      if (other !== index && !candidates[other]!.kept && similarity(shape, shapes[index]!) >= templateSimilarity)
        recurrences += 1;
    });
    return recurrences === 0
      ? candidate
      : { ...candidate, priority: candidate.priority / (1 + Math.log2(1 + recurrences)) };
  });
}

/** True when a kept fact's names, numbers and ids all occur in one of the sentences. */
function isStatedBy(fact: Candidate, sentences: readonly Candidate[]): boolean {
  const keys = [...keyWords(fact.text)];
  return keys.length > 0 && sentences.some((sentence) => keys.every((word) => sentence.words.has(word)));
}

/** The words that carry a fact: with a digit, or capitalized past the sentence's first word; lower-cased. */
function keyWords(text: string): Set<string> {
  const words = text.match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(
    words
      .filter((word, index) => /\d/.test(word) || (index > 0 && /^\p{Lu}/u.test(word)))
      .map((word) => word.toLowerCase()),
  );
}

function roleOf(speaker: string): MessageRole {
  return speaker === 'user' || speaker === 'assistant' || speaker === 'tool' || speaker === 'system'
    ? speaker
    : 'assistant';
}

function compareOrder(a: readonly number[], b: readonly number[]): number {
  for (let index = 0; index < a.length; index += 1) {
    const difference = a[index]! - b[index]!;
    if (difference !== 0) return difference;
  }
  return 0;
}

function wordSet(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

function similarity(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared += 1;
  return shared / (a.size + b.size - shared);
}

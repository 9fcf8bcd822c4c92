import { isMemoryError } from '../errors/memory-error.js';
import type { UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import type { Fact } from './fact.js';
import { normalizeFactValue } from './normalize-fact-value.js';
import { isSingleValuedAttribute } from './single-valued-attributes.js';
import { compareText } from '../text/compare-text.js';

/** What a consolidation did (or, dry, would do): each fact it ended and the fact that took its place. */
export interface FactConsolidation {
  /** Paraphrases of one attribute and value: the less specific one ends, superseded by the more specific. */
  readonly merged: readonly { readonly duplicate: Fact; readonly into: Fact }[];
  /** Two current values of a single-valued attribute: the older ends at the newer's `validFrom`. */
  readonly settled: readonly { readonly older: Fact; readonly newer: Fact }[];
}

/** Options of {@link consolidateFacts}. */
export interface ConsolidateOptions extends CallOptions {
  /** Report what would change and write nothing. Default false. */
  readonly dryRun?: boolean;
}

/**
 * One consolidation pass over a user's current facts (those expired at `now` are left alone), per subject
 * and attribute:
 * - **Duplicates merge.** Two values are paraphrases when their words (normalized as
 *   {@link normalizeFactValue} does, digits apart from letters: `10000mAh` is `10000 mah`) are the same,
 *   or the words of one, at least two of them, are all in the other (`power bank` in `a 10000 mAh power
 *   bank`; a single word is not enough: `dogs` is not `hot dogs`). The more specific value stays (more
 *   words; then the more confident; then the older); the other ends now, superseded by it.
 * - **Contradictions settle by time.** A single-valued attribute with two current values keeps the one
 *   valid from later; the older ends when the newer began, superseded by it, and stays in the history.
 * Nothing is deleted. A fact another writer ended meanwhile (`conflict`) is passed over.
 */
export async function consolidateFacts(
  store: Store,
  user: UserScope,
  now: string,
  options: ConsolidateOptions = {},
): Promise<FactConsolidation> {
  const callOptions: CallOptions = options.signal === undefined ? {} : { signal: options.signal };
  const current = await store.listFacts(user, { now }, callOptions);
  const groups = new Map<string, Fact[]>();
  for (const fact of current) {
    const key = `${fact.subject.toLowerCase()}\u0000${fact.attribute}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [fact]);
    else group.push(fact);
  }
  const merged: { duplicate: Fact; into: Fact }[] = [];
  const settled: { older: Fact; newer: Fact }[] = [];
  const end = async (fact: Fact, at: string, successor: Fact): Promise<boolean> => {
    if (options.dryRun === true) return true;
    try {
      await store.retireFact(user, fact.id, at, { ...callOptions, supersededBy: successor.id });
      return true;
    } catch (error) {
      if (isMemoryError(error, 'conflict')) return false;
      throw error;
    }
  };
  for (const facts of groups.values()) {
    if (facts.length < 2) continue;
    const kept: { fact: Fact; words: Set<string> }[] = [];
    for (const fact of [...facts].sort(bySpecificity)) {
      const words = valueWords(fact.value);
      const into = kept.find((survivor) => isParaphrase(words, survivor.words));
      if (into === undefined) kept.push({ fact, words });
      else if (await end(fact, now, into.fact)) merged.push({ duplicate: fact, into: into.fact });
    }
    if (kept.length < 2 || !isSingleValuedAttribute(kept[0]!.fact.attribute)) continue;
    const [newest, ...older] = kept
      .map((survivor) => survivor.fact)
      .sort((a, b) => compareText(b.validFrom, a.validFrom) || compareText(b.createdAt, a.createdAt));
    for (const fact of older)
      if (await end(fact, newest!.validFrom, newest!)) settled.push({ older: fact, newer: newest! });
  }
  return { merged, settled };
}

/** The words of a value as {@link consolidateFacts} compares them. */
export function valueWords(value: string): Set<string> {
  const words = normalizeFactValue(value)
    .replace(/(\d)(\p{L})/gu, '$1 $2')
    .replace(/(\p{L})(\d)/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
  return new Set(words);
}

function isParaphrase(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size === 0 || b.size === 0) return false;
  const [smaller, larger] = a.size <= b.size ? [a, b] : [b, a];
  if (smaller.size === larger.size) return [...smaller].every((word) => larger.has(word));
  return smaller.size >= 2 && [...smaller].every((word) => larger.has(word));
}

// More words first, then the more confident, then the older: the first of a set of paraphrases stays.
function bySpecificity(a: Fact, b: Fact): number {
  return (
    valueWords(b.value).size - valueWords(a.value).size ||
    b.confidence - a.confidence ||
    compareText(a.validFrom, b.validFrom) ||
    compareText(a.id, b.id)
  );
}

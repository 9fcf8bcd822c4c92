import { isMemoryError, MemoryError } from '../errors/memory-error.js';
import type { UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import type { Fact, NewFact } from './fact.js';
import type { ExtractedFact } from './fact-extractor.js';
import { normalizeFactValue, toAttributeKey } from './normalize-fact-value.js';
import { isSingleValuedAttribute } from './single-valued-attributes.js';

/** When each source message was said: a function or a map from seq to ISO 8601 time. */
export type MessageTimes = ((seq: number) => string | undefined) | ReadonlyMap<number, string>;

/** Where extracted facts come from, for their provenance and validity. */
export interface ReconcileContext {
  readonly conversationId: string;
  /** Id of the extractor that read them (`heuristic@1`), stored on each fact. */
  readonly extractor: string;
  /** The time of each source message: a fact is valid from its newest source message's time. */
  readonly now: MessageTimes;
  /** ISO 8601 `createdAt` of the stored facts; default their `validFrom`. */
  readonly recordedAt?: string;
  readonly signal?: AbortSignal;
}

/** What reconciliation did with each extracted fact. */
export interface FactReconciliation {
  /** Facts stored as new (an addition, not a replacement). */
  readonly added: Fact[];
  /** Single-valued facts replaced: the old version (now ended, `supersededBy` set) and its successor. */
  readonly superseded: { readonly old: Fact; readonly new: Fact }[];
  /** Extracted facts that changed nothing: duplicates, replays, stale values, negations of nothing, malformed facts. */
  readonly ignored: ExtractedFact[];
  /** Facts ended without a successor: by a negation, or extra current values of a single-valued attribute. */
  readonly retired: Fact[];
}

interface Outcome {
  readonly added?: Fact;
  readonly superseded?: { old: Fact; new: Fact };
  readonly retired?: Fact[];
}

/**
 * Merges extracted facts into a user's stored facts, in order, so that the store holds current truth
 * and its history: a fact equal to a current one (same subject, case-insensitively; same attribute;
 * same {@link normalizeFactValue}) is ignored, as is one already recorded from the same message (a
 * retried job) or one older than the current value; a new value of a single-valued attribute
 * ({@link isSingleValuedAttribute}), or one the user said replaces the old (`replaces`), supersedes the current one through `Store.insertFact` with
 * `supersedes` (the old one keeps its row, gains `validTo` and `supersededBy`, and still answers
 * `asOf` queries); a multi-valued attribute gains the value; `polarity: 'negate'` retires the matching
 * current facts (all of the attribute when the value is empty). Nothing is ever deleted. Facts of
 * other users are never read or touched. When a write hits `conflict` (another worker changed the same
 * fact first) the facts are re-read and that fact is reconciled once more; a second conflict is thrown.
 * Throws `invalid_input` when a source message has no time in `context.now`; store errors pass through.
 */
export async function reconcileFacts(
  store: Store,
  user: UserScope,
  extracted: readonly ExtractedFact[],
  context: ReconcileContext,
): Promise<FactReconciliation> {
  const result: FactReconciliation = { added: [], superseded: [], ignored: [], retired: [] };
  const callOptions: CallOptions = context.signal === undefined ? {} : { signal: context.signal };
  let facts = await store.listFacts(user, { includeHistory: true }, callOptions);
  for (const fact of extracted) {
    context.signal?.throwIfAborted();
    if (!isWellFormed(fact)) {
      result.ignored.push(fact);
      continue;
    }
    const candidate = { ...fact, attribute: toAttributeKey(fact.attribute) };
    const validFrom = timeOf(context.now, Math.max(...fact.sourceSeqs));
    let outcome: Outcome | undefined;
    try {
      outcome = await applyFact(store, user, facts, candidate, validFrom, context, callOptions);
    } catch (error) {
      if (!isMemoryError(error, 'conflict')) throw error;
      facts = await store.listFacts(user, { includeHistory: true }, callOptions);
      outcome = await applyFact(store, user, facts, candidate, validFrom, context, callOptions);
    }
    if (outcome === undefined) {
      result.ignored.push(fact);
      continue;
    }
    if (outcome.added !== undefined) result.added.push(outcome.added);
    if (outcome.superseded !== undefined) result.superseded.push(outcome.superseded);
    result.retired.push(...(outcome.retired ?? []));
    facts = applyOutcome(facts, outcome);
  }
  return result;
}

async function applyFact(
  store: Store,
  user: UserScope,
  facts: readonly Fact[],
  fact: ExtractedFact,
  validFrom: string,
  context: ReconcileContext,
  callOptions: CallOptions,
): Promise<Outcome | undefined> {
  const value = normalizeFactValue(fact.value);
  const sameSlot = (stored: Fact) =>
    stored.subject.toLowerCase() === fact.subject.toLowerCase() && stored.attribute === fact.attribute;
  const current = facts.filter((stored) => stored.validTo === undefined && sameSlot(stored));
  const sameValue = (stored: Fact) => normalizeFactValue(stored.value) === value;

  if (fact.polarity === 'negate') {
    const ended = current.filter((stored) => (value === '' || sameValue(stored)) && stored.validFrom <= validFrom);
    if (ended.length === 0) return undefined;
    const retired: Fact[] = [];
    for (const stored of ended) retired.push(await store.retireFact(user, stored.id, validFrom, callOptions));
    return { retired };
  }
  const replayed = facts.some(
    (stored) =>
      sameSlot(stored) &&
      sameValue(stored) &&
      stored.sourceConversationId === context.conversationId &&
      stored.sourceSeqs.some((seq) => fact.sourceSeqs.includes(seq)),
  );
  if (replayed || current.some(sameValue)) return undefined;
  const newFact = toNewFact(fact, validFrom, context);
  const singleValued = isSingleValuedAttribute(fact.attribute) || fact.replaces === true;
  if (!singleValued || current.length === 0) return { added: await store.insertFact(user, newFact, callOptions) };
  // An older statement (a backlog read late) never overrides a newer value.
  if (current.some((stored) => stored.validFrom > validFrom)) return undefined;
  const [latest, ...extra] = [...current].sort((a, b) =>
    a.validFrom < b.validFrom ? 1 : a.validFrom > b.validFrom ? -1 : 0,
  );
  const stored = await store.insertFact(user, newFact, { ...callOptions, supersedes: latest!.id });
  const retired: Fact[] = [];
  for (const other of extra) retired.push(await store.retireFact(user, other.id, validFrom, callOptions));
  return {
    superseded: { old: { ...latest!, validTo: stored.validFrom, supersededBy: stored.id }, new: stored },
    retired,
  };
}

function applyOutcome(facts: readonly Fact[], outcome: Outcome): Fact[] {
  const replaced = new Map<string, Fact>();
  for (const fact of outcome.retired ?? []) replaced.set(fact.id, fact);
  if (outcome.superseded !== undefined) replaced.set(outcome.superseded.old.id, outcome.superseded.old);
  const next = facts.map((fact) => replaced.get(fact.id) ?? fact);
  if (outcome.added !== undefined) next.push(outcome.added);
  if (outcome.superseded !== undefined) next.push(outcome.superseded.new);
  return next;
}

function toNewFact(fact: ExtractedFact, validFrom: string, context: ReconcileContext): NewFact {
  return {
    subject: fact.subject,
    attribute: fact.attribute,
    value: fact.value.trim(),
    text: fact.text,
    confidence: Math.min(1, Math.max(0, fact.confidence)),
    validFrom,
    sourceConversationId: context.conversationId,
    sourceSeqs: [...fact.sourceSeqs],
    extractor: context.extractor,
    createdAt: context.recordedAt ?? validFrom,
  };
}

// An LLM extractor can return anything; a fact without a subject, attribute, value or source changes nothing.
function isWellFormed(fact: ExtractedFact): boolean {
  const text = (value: unknown) => typeof value === 'string' && value.trim().length > 0;
  return (
    text(fact.subject) &&
    text(fact.attribute) &&
    toAttributeKey(fact.attribute) !== '' &&
    (fact.polarity === 'negate' ? typeof fact.value === 'string' : text(fact.value)) &&
    typeof fact.text === 'string' &&
    Number.isFinite(fact.confidence) &&
    Array.isArray(fact.sourceSeqs) &&
    fact.sourceSeqs.length > 0 &&
    fact.sourceSeqs.every((seq) => Number.isInteger(seq) && seq > 0)
  );
}

function timeOf(times: MessageTimes, seq: number): string {
  const time = typeof times === 'function' ? times(seq) : times.get(seq);
  if (time === undefined)
    throw new MemoryError('invalid_input', `no time is known for source message ${seq}`, { details: { seq } });
  return time;
}

import { MemoryError } from '../errors/memory-error.js';
import type { UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import type { Fact } from './fact.js';
import { normalizeFactValue, toAttributeKey } from './normalize-fact-value.js';
import { isSingleValuedAttribute } from './single-valued-attributes.js';

/** A fact stated by hand (through the API), not read from messages. */
export interface FactInput {
  /** Default `user`. */
  readonly subject?: string;
  readonly attribute: string;
  readonly value: string;
  /** The statement; default `"<attribute>: <value>"`. */
  readonly text?: string;
  /** ISO 8601; default now. */
  readonly validFrom?: string;
  /** ISO 8601: when the fact expires (leaves current listings and contexts, stays in history); default never. */
  readonly expiresAt?: string;
}

/** A correction of a current fact: its new value, and the statement (default `"<attribute>: <value>"`). */
export interface FactCorrection {
  readonly value: string;
  readonly text?: string;
}

/**
 * Stores a fact by hand with the same reconciliation as extraction: the same value again returns the
 * current fact; a new value of a single-valued attribute supersedes the current one (never deletes it).
 */
export async function putFact(
  store: Store,
  user: UserScope,
  input: FactInput,
  now: string,
  options?: CallOptions,
): Promise<Fact> {
  const attribute = typeof input.attribute === 'string' ? toAttributeKey(input.attribute) : '';
  if (attribute === '' || typeof input.value !== 'string' || input.value.trim() === '') {
    throw new MemoryError('invalid_input', 'a fact needs an attribute and a non-empty value', {
      details: { field: attribute === '' ? 'attribute' : 'value' },
    });
  }
  const subject = input.subject ?? 'user';
  const expiresAt = input.expiresAt === undefined ? undefined : toIsoTime('expiresAt', input.expiresAt);
  const current = await store.listFacts(user, { subject, attribute, now }, options);
  const same = current.find((fact) => normalizeFactValue(fact.value) === normalizeFactValue(input.value));
  if (same !== undefined) return same;
  const validFrom = input.validFrom ?? now;
  const fact = {
    subject,
    attribute,
    value: input.value.trim(),
    text: input.text ?? `${attribute.replace(/_/g, ' ')}: ${input.value.trim()}`,
    confidence: 1,
    validFrom,
    sourceSeqs: [],
    extractor: 'api',
    createdAt: now,
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
  const replaced = isSingleValuedAttribute(attribute) ? current[current.length - 1] : undefined;
  return store.insertFact(user, fact, { ...options, ...(replaced === undefined ? {} : { supersedes: replaced.id }) });
}

/**
 * Corrects a current fact: a new fact with the corrected value supersedes it (validity kept, history
 * kept), whatever the attribute. The same value again returns the fact unchanged. `not_found` for a
 * fact the user does not have, `conflict` for one no longer current, `invalid_input` for an empty value.
 */
export async function correctFact(
  store: Store,
  user: UserScope,
  factId: string,
  correction: FactCorrection,
  now: string,
  options?: CallOptions,
): Promise<Fact> {
  if (typeof correction.value !== 'string' || correction.value.trim() === '') {
    throw new MemoryError('invalid_input', 'a correction needs a non-empty value', { details: { field: 'value' } });
  }
  const history = await store.listFacts(user, { includeHistory: true }, options);
  const fact = history.find((item) => item.id === factId);
  if (fact === undefined) throw new MemoryError('not_found', `fact ${factId} does not exist`, { details: { factId } });
  if (fact.validTo !== undefined)
    throw new MemoryError('conflict', `fact ${factId} is no longer current`, { details: { factId } });
  const value = correction.value.trim();
  if (normalizeFactValue(fact.value) === normalizeFactValue(value) && correction.text === undefined) return fact;
  const corrected = {
    subject: fact.subject,
    attribute: fact.attribute,
    value,
    text: correction.text ?? `${fact.attribute.replace(/_/g, ' ')}: ${value}`,
    confidence: 1,
    validFrom: now,
    sourceSeqs: [],
    extractor: 'api',
    createdAt: now,
  };
  return store.insertFact(user, corrected, { ...options, supersedes: fact.id });
}

/** An ISO 8601 time as the stores write it; `invalid_input` naming the field for anything else. */
export function toIsoTime(field: string, value: string): string {
  const time = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(time))
    throw new MemoryError('invalid_input', `${field} must be an ISO 8601 time (got ${JSON.stringify(value)})`, {
      details: { field },
    });
  return new Date(time).toISOString();
}

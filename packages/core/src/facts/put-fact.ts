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
}

/**
 * Stores a fact by hand with the same reconciliation as extraction: the same value again returns the
 * current fact; a new value of a single-valued attribute supersedes the current one (never deletes it).
 */
export async function putFact(store: Store, user: UserScope, input: FactInput, now: string, options?: CallOptions): Promise<Fact> {
  const attribute = typeof input.attribute === 'string' ? toAttributeKey(input.attribute) : '';
  if (attribute === '' || typeof input.value !== 'string' || input.value.trim() === '') {
    throw new MemoryError('invalid_input', 'a fact needs an attribute and a non-empty value', { details: { field: attribute === '' ? 'attribute' : 'value' } });
  }
  const subject = input.subject ?? 'user';
  const current = await store.listFacts(user, { subject, attribute }, options);
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
  };
  const replaced = isSingleValuedAttribute(attribute) ? current[current.length - 1] : undefined;
  return store.insertFact(user, fact, { ...options, ...(replaced === undefined ? {} : { supersedes: replaced.id }) });
}

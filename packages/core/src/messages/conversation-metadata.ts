import { MemoryError } from '../errors/memory-error.js';
import { copyMetadata } from './copy-metadata.js';
import { messageRoles, type MessageRole, type Metadata } from './message.js';

/** Largest accepted conversation `metadata`, in characters of its JSON: the same bound as a message's. */
export const maxConversationMetadataChars = 16_384;

/** How many stored messages of each role a conversation has; a role without messages is absent. */
export type RoleCounts = Readonly<Partial<Record<MessageRole, number>>>;

/**
 * Checks the metadata of `Store.updateConversationMetadata` and returns the JSON copy to store. Throws
 * `invalid_input` (field `metadata`) unless it is a plain JSON object (an object literal, not an array,
 * a class instance or a Map) of at most {@link maxConversationMetadataChars} characters of JSON without
 * NUL characters, which PostgreSQL's jsonb cannot hold; every store accepts exactly the same input.
 */
export function checkConversationMetadata(metadata: unknown): Metadata {
  const fail = (problem: string, details: Record<string, unknown> = {}): never => {
    throw new MemoryError('invalid_input', `conversation metadata ${problem}`, {
      details: { field: 'metadata', ...details },
    });
  };
  const prototype: unknown =
    typeof metadata === 'object' && metadata !== null ? Object.getPrototypeOf(metadata) : undefined;
  if (prototype !== Object.prototype && prototype !== null) fail('must be a plain JSON object');
  const copy = copyMetadata(metadata, maxConversationMetadataChars, fail);
  if (containsNul(copy)) fail('must not contain NUL characters (U+0000)');
  return copy;
}

/** Role counts in {@link messageRoles} order from `(role, count)` rows such as a `GROUP BY role` returns. */
export function toRoleCounts(rows: Iterable<{ readonly role: string; readonly count: unknown }>): RoleCounts {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.role, (counts.get(row.role) ?? 0) + Number(row.count));
  const result: Partial<Record<MessageRole, number>> = {};
  for (const role of messageRoles) {
    const count = counts.get(role);
    if (count !== undefined && count > 0) result[role] = count;
  }
  return Object.freeze(result);
}

function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, item]) => key.includes('\u0000') || containsNul(item));
}

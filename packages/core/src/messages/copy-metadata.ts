import type { Metadata } from './message.js';

/** Deepest nesting of objects and arrays accepted in metadata; the metadata object itself is level 1. */
export const maxMetadataDepth = 32;

/**
 * Checks that `value` is a JSON object of at most `maxChars` characters of JSON, nested at most
 * {@link maxMetadataDepth} levels, and returns a copy made through JSON (so nothing the caller mutates
 * later reaches the store). Calls `fail` with the problem for anything else: a non-object or array, a
 * value JSON cannot serialize, or one over a limit.
 */
export function copyMetadata(
  value: unknown,
  maxChars: number,
  fail: (problem: string, details?: Record<string, unknown>) => never,
): Metadata {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('must be a JSON object');
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    return fail(`is not serializable to JSON (${(error as Error).message})`);
  }
  if (json.length > maxChars)
    return fail(`is over ${maxChars} characters of JSON`, { length: json.length, limit: maxChars });
  const copy = JSON.parse(json) as Metadata;
  const depth = nestingDepth(copy);
  if (depth > maxMetadataDepth)
    return fail(`is nested deeper than ${maxMetadataDepth} levels`, { depth, limit: maxMetadataDepth });
  return copy;
}

// Iterative, so metadata nested thousands deep cannot overflow the stack while it is measured.
function nestingDepth(root: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[root, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, depth] = next;
    if (typeof value !== 'object' || value === null) continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(value)) pending.push([child, depth + 1]);
  }
  return deepest;
}

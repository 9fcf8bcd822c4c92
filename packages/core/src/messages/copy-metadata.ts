import type { Metadata } from './message.js';

/**
 * Checks that `value` is a JSON object of at most `maxChars` characters of JSON and returns a copy made
 * through JSON (so nothing the caller mutates later reaches the store). Calls `fail` with the problem for
 * anything else: a non-object or array, a value JSON cannot serialize, or one over the limit.
 */
export function copyMetadata(value: unknown, maxChars: number, fail: (problem: string, details?: Record<string, unknown>) => never): Metadata {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('must be a JSON object');
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    return fail(`is not serializable to JSON (${(error as Error).message})`);
  }
  if (json.length > maxChars) return fail(`is over ${maxChars} characters of JSON`, { length: json.length, limit: maxChars });
  return JSON.parse(json) as Metadata;
}

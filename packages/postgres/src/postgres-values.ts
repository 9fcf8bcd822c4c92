import { parseStoredTime } from '@mnemo/core/store-kit';

// Conversions between the port's values and the driver's. Rows are read defensively: `pg` returns bigint
// and numeric columns as strings, timestamptz as Date and json as parsed values by default, and a pool the
// caller configured may parse them differently; every reader goes through these functions.

/** The three key columns of a conversation, in index order. */
export { scopeKey } from '@mnemo/core/store-kit';

/** A bigint/integer column as a JavaScript number (the store only writes safe integers). */
export function toInteger(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** A timestamptz column as ISO 8601 text with milliseconds, UTC. */
export function toIsoTime(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

/** A json column as its value: parsed by the driver already, or parsed here when it came back as text (core's rule, shared with SQLite). */
export { fromJsonColumn as fromJson } from '@mnemo/core/store-kit';

/** Parses ISO 8601 text to the canonical form the store hands PostgreSQL; `invalid_input` naming the field otherwise. */
export function checkTime(field: string, value: string, index?: number): string {
  return new Date(parseStoredTime(field, value, index)).toISOString();
}

/** Checks a non-negative safe integer; `invalid_input` naming the field otherwise. */
export { checkCount } from '@mnemo/core/store-kit';

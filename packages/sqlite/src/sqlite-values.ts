import { parseStoredTime, type ToIsoTime } from '@mnemo/core/store-kit';

// Conversions between the port's values and SQLite's: times are stored as epoch ms (INTEGER) and given
// back as ISO 8601 text, JSON as TEXT. The checks of the values themselves are core's (store-kit).

/** The three key columns of a conversation, in index order. */
export { scopeKey } from '@mnemo/core/store-kit';

/** An epoch-ms column as ISO 8601 text with milliseconds, UTC. */
export const toIsoTime: ToIsoTime = (ms) => new Date(Number(ms)).toISOString();

/** Parses ISO 8601 text to the epoch ms the store writes; `invalid_input` naming the field otherwise. */
export const toEpochMs = parseStoredTime;

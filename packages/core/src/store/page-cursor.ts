import { MemoryError } from '../errors/memory-error.js';

/** Position after the last conversation of a page: conversations are ordered by user id, then id. */
export interface ConversationCursor {
  readonly userId: string;
  readonly conversationId: string;
}

/** Default and largest page sizes of cursor-paged listings. */
export const defaultPageLimit = 100;
export const maxPageLimit = 1000;

/** Encodes a cursor as opaque base64url text. */
export function encodeConversationCursor(cursor: ConversationCursor): string {
  return Buffer.from(JSON.stringify([cursor.userId, cursor.conversationId]), 'utf8').toString('base64url');
}

/** Decodes {@link encodeConversationCursor}'s text; throws `invalid_input` for anything else. */
export function decodeConversationCursor(text: string): ConversationCursor {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      return { userId: value[0], conversationId: value[1] };
    }
  } catch {
    // Falls through to the typed error below: a cursor is opaque to callers, so any damage is invalid input.
  }
  throw new MemoryError('invalid_input', 'cursor is not one this store issued', { details: { field: 'cursor' } });
}

/** Encodes the position after the last entry of a page of a positioned listing (the usage ledger). */
export function encodePositionCursor(position: number): string {
  return Buffer.from(JSON.stringify([position]), 'utf8').toString('base64url');
}

/** Decodes {@link encodePositionCursor}'s text; throws `invalid_input` for anything else. */
export function decodePositionCursor(text: string): number {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 1 && Number.isSafeInteger(value[0]) && value[0] >= 0)
      return value[0] as number;
  } catch {
    // Falls through to the typed error below, as for conversation cursors.
  }
  throw new MemoryError('invalid_input', 'cursor is not one this store issued', { details: { field: 'cursor' } });
}

/** Checks a page size: an integer from 1 to {@link maxPageLimit}, default {@link defaultPageLimit}. */
export function resolvePageLimit(limit: number | undefined): number {
  if (limit === undefined) return defaultPageLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxPageLimit) {
    throw new MemoryError('invalid_input', `limit must be an integer from 1 to ${maxPageLimit}`, {
      details: { field: 'limit', limit },
    });
  }
  return limit;
}

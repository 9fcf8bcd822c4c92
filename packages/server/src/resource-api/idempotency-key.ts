import { MemoryError } from '@mnemo/core';
import type { Context } from 'hono';

/** The header that names a write so that a retry of it stores nothing twice (resource API and seed add). */
export const idempotencyHeader = 'Idempotency-Key';

/** Longest `Idempotency-Key` header accepted, in characters. */
export const maxIdempotencyKeyChars = 200;

/** The request's `Idempotency-Key` header, or `undefined`; `invalid_input` when it is blank or over {@link maxIdempotencyKeyChars}. */
export function readIdempotencyHeader(c: Context): string | undefined {
  const key = c.req.header(idempotencyHeader);
  if (key !== undefined && (key.trim() === '' || key.length > maxIdempotencyKeyChars)) {
    throw new MemoryError('invalid_input', `${idempotencyHeader} must be 1 to ${maxIdempotencyKeyChars} characters`, {
      details: { field: idempotencyHeader },
    });
  }
  return key;
}

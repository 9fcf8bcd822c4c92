import { MemoryError } from '../errors/memory-error.js';

// Checks of the values a Store writes, the same in every adapter, each an `invalid_input` naming the field
// (and, inside a batch of messages, the message's index).

function where(index: number | undefined): string {
  return index === undefined ? '' : `message ${index}: `;
}

function details(field: string, index: number | undefined): Record<string, unknown> {
  return { field, ...(index === undefined ? {} : { index }) };
}

/** Parses ISO 8601 text to epoch ms; `invalid_input` naming the field otherwise. */
export function parseStoredTime(field: string, value: string, index?: number): number {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms))
    throw new MemoryError('invalid_input', `${where(index)}${field} must be an ISO 8601 date`, {
      details: details(field, index),
    });
  return ms;
}

/** Checks a non-negative safe integer and returns it; `invalid_input` naming the field otherwise. */
export function checkCount(field: string, value: number, index?: number): number {
  if (Number.isSafeInteger(value) && value >= 0) return value;
  throw new MemoryError('invalid_input', `${where(index)}${field} must be a non-negative integer`, {
    details: details(field, index),
  });
}

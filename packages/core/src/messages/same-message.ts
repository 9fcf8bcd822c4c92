import { MemoryError } from '../errors/memory-error.js';
import type { NewMessage } from './message.js';

/**
 * True when a retried append carries the same message as the stored one under its idempotency key.
 * Time and metadata may differ between retries (clients stamp them per attempt); what was said may not.
 */
export function isSameMessage(stored: NewMessage, retried: NewMessage): boolean {
  return (
    stored.role === retried.role &&
    stored.content === retried.content &&
    stored.name === retried.name &&
    stored.toolCallId === retried.toolCallId &&
    JSON.stringify(stored.toolCalls ?? null) === JSON.stringify(retried.toolCalls ?? null)
  );
}

/** Error for an idempotency key reused with a different message; shared by every adapter. */
export function idempotencyConflict(key: string): MemoryError {
  return new MemoryError(
    'conflict',
    `idempotency key ${JSON.stringify(key)} was already used for a different message`,
    {
      details: { field: 'idempotencyKey', idempotencyKey: key },
    },
  );
}

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

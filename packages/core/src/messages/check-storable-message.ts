import { MemoryError } from '../errors/memory-error.js';
import { checkCount, parseStoredTime } from '../store/stored-values.js';
import { messageRoles, type NewMessage } from './message.js';

/**
 * The checks every store makes on a message before it writes it: a known role, a canonical `createdAt`
 * and a non-negative integer `tokens`; `invalid_input` naming the field and the message's index otherwise.
 * Stores give times back as ISO text, and only canonical ISO text (what `toISOString()` prints) survives
 * the round trip unchanged, so anything else is refused, not altered.
 */
export function checkStorableMessage(message: NewMessage, index: number): void {
  if (!(messageRoles as readonly string[]).includes(message.role)) {
    throw new MemoryError('invalid_input', `message ${index}: role must be one of ${messageRoles.join(', ')}`, {
      details: { field: 'role', index },
    });
  }
  if (new Date(parseStoredTime('createdAt', message.createdAt, index)).toISOString() !== message.createdAt) {
    throw new MemoryError(
      'invalid_input',
      `message ${index}: createdAt must be ISO 8601 UTC with milliseconds, as toISOString() prints it`,
      {
        details: { field: 'createdAt', index },
      },
    );
  }
  checkCount('tokens', message.tokens, index);
}

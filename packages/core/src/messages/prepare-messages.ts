import { MemoryError } from '../errors/memory-error.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { NewMessage } from './message.js';
import { validateMessageInput, type MessageLimits } from './validate-message.js';

/**
 * Validates what a caller appends (one message or an array, possibly parsed JSON) and prepares it for
 * the store: times stamped, tokens counted once. Throws `invalid_input` before anything is stored.
 */
export function prepareMessages(
  input: unknown,
  options: { limits: MessageLimits; counter: TokenCounter; now: () => number },
): NewMessage[] {
  const list: unknown[] = Array.isArray(input) ? input : [input];
  if (list.length === 0) throw new MemoryError('invalid_input', 'append needs at least one message');
  const createdAt = new Date(options.now()).toISOString();
  return list.map((raw, index) => {
    const message = validateMessageInput(raw, options.limits, list.length === 1 ? undefined : index);
    return {
      role: message.role,
      content: message.content,
      name: message.name,
      toolCalls: message.toolCalls,
      toolCallId: message.toolCallId,
      createdAt: message.createdAt ?? createdAt,
      metadata: message.metadata,
      idempotencyKey: message.idempotencyKey,
      tokens: options.counter.countMessage(message),
    };
  });
}

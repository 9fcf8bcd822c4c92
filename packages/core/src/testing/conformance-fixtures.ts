import type { NewMessage } from '../messages/message.js';
import type { Scope } from '../messages/scope.js';

/** Builds a valid stored-message input for tests: `tokens` is the content length, enough for sums. */
export function makeNewMessage(content: string, overrides: Partial<NewMessage> = {}): NewMessage {
  return {
    role: 'user',
    content,
    name: undefined,
    toolCalls: undefined,
    toolCallId: undefined,
    createdAt: new Date().toISOString(),
    metadata: undefined,
    idempotencyKey: undefined,
    tokens: content.length,
    ...overrides,
  };
}

/** The scope most conformance cases write to. */
export const scopeA: Scope = { tenantId: 'tenant-a', userId: 'user-1', conversationId: 'conv-1' };

/** An ISO time `offsetMs` after a fixed instant (2030-01-01T00:00:00.000Z): job and ledger times that tests control. */
export function at(offsetMs: number): string {
  return new Date(Date.parse('2030-01-01T00:00:00.000Z') + offsetMs).toISOString();
}

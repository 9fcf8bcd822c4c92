import type { Message, MessageInput } from '@mnemo/core';
import { matchLength } from './select-new-turns.js';

/** A request that asks again for the reply to a stored user turn: that turn's seq, and the stored replies the new one supersedes. */
export interface RegeneratedTurn {
  readonly userSeq: number;
  readonly replyIds: readonly string[];
}

/**
 * Recognizes a regenerate (or a client's retry after a reply it did not get whole): the request's turns
 * end with a user turn equal to the newest stored user turn, the turns before it equal the stored ones
 * before it, and only assistant replies (with their tool results) follow it in the store. `stored` is
 * the conversation's tail, oldest first, without superseded replies. Anything else is `undefined`.
 */
export function findRegeneratedTurn(
  stored: readonly Message[],
  incoming: readonly MessageInput[],
): RegeneratedTurn | undefined {
  const last = incoming.at(-1);
  if (last?.role !== 'user') return undefined;
  const userIndex = stored.findLastIndex((message) => message.role === 'user');
  if (userIndex < 0 || userIndex === stored.length - 1) return undefined;
  const replies = stored.slice(userIndex + 1);
  if (!replies.every((message) => message.role === 'assistant' || message.role === 'tool')) return undefined;
  const start = userIndex - (incoming.length - 1);
  if (start < 0 || matchLength(stored, start, incoming) !== incoming.length) return undefined;
  return { userSeq: stored[userIndex]!.seq, replyIds: replies.map((message) => message.id) };
}

import type { Message, MessageInput } from '@mnemo/core';

/** Stored messages read beyond the request's own count, so a client that re-sends a history cut short by a few turns still aligns. */
export const dedupSlackMessages = 32;

/** How the incoming turns lined up with the stored conversation. */
export type TurnAlignment =
  /** A prefix of the incoming turns is the stored tail (a client re-sending its history, or retrying): the rest is new. */
  | 'tail'
  /** Two or more incoming turns in a row match stored turns that are not the tail (a regenerated or edited history): what follows the match is new. */
  | 'resent'
  /** Nothing lined up: every incoming turn is new (a client sending only the new turn). */
  | 'none';

/** Which incoming turns to append, and why. */
export interface NewTurns {
  readonly turns: readonly MessageInput[];
  /** Incoming turns recognized as already stored. */
  readonly matched: number;
  readonly alignment: TurnAlignment;
}

/**
 * Decides which of a request's turns are new, given the newest stored messages of the conversation
 * (oldest first; pass at least `incoming.length + dedupSlackMessages` of them). First, the longest
 * prefix of `incoming` equal to the stored tail (by role, trimmed content, tool-call id and tool calls, arguments compared as JSON);
 * failing that, for two or more incoming turns, the longest run of them starting at the first that
 * equals consecutive stored turns anywhere in the window; failing that, all of them.
 */
export function selectNewTurns(stored: readonly Message[], incoming: readonly MessageInput[]): NewTurns {
  const first = incoming[0];
  if (first === undefined) return { turns: [], matched: 0, alignment: 'none' };
  for (let overlap = Math.min(incoming.length, stored.length); overlap > 0; overlap -= 1) {
    const start = stored.length - overlap;
    if (matchLength(stored, start, incoming) === overlap)
      return { turns: incoming.slice(overlap), matched: overlap, alignment: 'tail' };
  }
  if (incoming.length >= 2) {
    let best = 0;
    for (let start = 0; start < stored.length; start += 1) best = Math.max(best, matchLength(stored, start, incoming));
    // One matching turn is a coincidence ("ok", "thanks"); two in a row is the client re-sending its history.
    if (best >= 2) return { turns: incoming.slice(best), matched: best, alignment: 'resent' };
  }
  return { turns: incoming, matched: 0, alignment: 'none' };
}

/** True when a stored message and an incoming turn say the same thing: role, content (trimmed), tool-call id and tool calls. */
export function isSameTurn(
  stored: Pick<Message, 'role' | 'content' | 'toolCallId' | 'toolCalls'>,
  incoming: MessageInput,
): boolean {
  if (stored.role !== incoming.role || stored.content.trim() !== incoming.content.trim()) return false;
  if ((stored.toolCallId ?? undefined) !== (incoming.toolCallId ?? undefined)) return false;
  const storedCalls = stored.toolCalls ?? [];
  const incomingCalls = incoming.toolCalls ?? [];
  return (
    storedCalls.length === incomingCalls.length &&
    storedCalls.every((call, index) => {
      const other = incomingCalls[index]!;
      return (
        call.id === other.id &&
        call.function.name === other.function.name &&
        sameArguments(call.function.arguments, other.function.arguments)
      );
    })
  );
}

// Clients re-send a tool call's arguments as they parsed them (the AI SDK, LangChain and the Anthropic SDK
// keep an object and serialize it again), so '{"city": "Oslo"}' stored comes back as '{"city":"Oslo"}'.
function sameArguments(stored: string, incoming: string): boolean {
  if (stored === incoming) return true;
  try {
    return JSON.stringify(JSON.parse(stored)) === JSON.stringify(JSON.parse(incoming));
  } catch {
    return false;
  }
}

/** How many turns from `start` on the stored ones and the incoming ones have in common, in order. */
export function matchLength(stored: readonly Message[], start: number, incoming: readonly MessageInput[]): number {
  let length = 0;
  while (
    start + length < stored.length &&
    length < incoming.length &&
    isSameTurn(stored[start + length]!, incoming[length]!)
  )
    length += 1;
  return length;
}

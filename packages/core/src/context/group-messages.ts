import type { Message } from '../messages/message.js';

/**
 * Messages that must travel together: an assistant message with tool calls and the tool results that
 * answer it, or a single message. A context takes or leaves a group whole.
 */
export interface MessageGroup {
  readonly messages: readonly Message[];
  readonly tokens: number;
}

/** A user message and everything until the next user message (groups before the first user message form their own turn). */
export interface Turn {
  readonly groups: readonly MessageGroup[];
  readonly tokens: number;
}

/** Splits messages (oldest first) into tool-safe groups. */
export function groupMessages(messages: readonly Message[]): MessageGroup[] {
  const groups: Message[][] = [];
  let openCalls = new Set<string>();
  for (const message of messages) {
    const current = groups[groups.length - 1];
    if (message.role === 'tool' && current !== undefined && openCalls.has(message.toolCallId ?? '')) {
      current.push(message);
      continue;
    }
    groups.push([message]);
    openCalls = new Set(message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => call.id) : []);
  }
  return groups.map((group) => ({ messages: group, tokens: sumTokens(group) }));
}

/** Splits groups (oldest first) into turns that each start at a user message. */
export function groupTurns(groups: readonly MessageGroup[]): Turn[] {
  const turns: MessageGroup[][] = [];
  for (const group of groups) {
    const current = turns[turns.length - 1];
    if (current === undefined || group.messages[0]?.role === 'user') turns.push([group]);
    else current.push(group);
  }
  return turns.map((turn) => ({ groups: turn, tokens: turn.reduce((sum, group) => sum + group.tokens, 0) }));
}

/** Sum of the stored token counts of messages. */
export function sumTokens(messages: readonly { tokens: number }[]): number {
  return messages.reduce((sum, message) => sum + message.tokens, 0);
}

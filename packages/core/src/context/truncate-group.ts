import type { Message } from '../messages/message.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { MessageGroup } from './group-messages.js';

/** A stored message as it goes into a context: whole, or with its content shortened and marked. */
export interface FittedMessage {
  readonly message: Message;
  readonly content: string;
  readonly tokens: number;
  /** Set when the content was shortened: the message's tokens before. */
  readonly truncatedFrom?: number;
}

/** Sends a message as stored. */
export function fitWhole(message: Message): FittedMessage {
  return { message, content: message.content, tokens: message.tokens };
}

/** The marker that ends a shortened message, so neither the model nor a reader mistakes it for the whole. */
export function truncationMarker(keptTokens: number, originalTokens: number): string {
  return `\n[mnemo: message truncated to fit the context budget; ${keptTokens} of ${originalTokens} content tokens kept]`;
}

const maxAttempts = 8;

/**
 * Shortens the contents of a group (one message, or a tool call with its results) so the whole group
 * costs at most `budgetTokens`, sharing the room in proportion to each content's size and marking every
 * shortened content. Returns `undefined` when not even the framing and markers fit.
 */
export function truncateGroup(
  group: MessageGroup,
  budgetTokens: number,
  counter: TokenCounter,
): FittedMessage[] | undefined {
  const framing = group.messages.map((message) => counter.countMessage({ ...message, content: '' }));
  const contentTokens = group.messages.map((message, index) => message.tokens - framing[index]!);
  const totalContent = contentTokens.reduce((sum, tokens) => sum + tokens, 0);
  const markerTokens = counter.countText(truncationMarker(999_999, 999_999));
  let room = budgetTokens - framing.reduce((sum, tokens) => sum + tokens, 0);
  // BPE merges across the cut can shift a count by a token or two, so re-count and shrink until it fits.
  for (let attempt = 0; attempt < maxAttempts && room > 0; attempt += 1) {
    const fitted = group.messages.map((message, index) => {
      const own = contentTokens[index]!;
      const share = totalContent === 0 ? 0 : Math.floor((room * own) / totalContent);
      if (own <= share) return fitWhole(message);
      const keep = share - markerTokens;
      if (keep < 0) return undefined;
      const kept = counter.truncateText(message.content, keep);
      const content = kept + truncationMarker(counter.countText(kept), own);
      return { message, content, tokens: counter.countMessage({ ...message, content }), truncatedFrom: message.tokens };
    });
    if (fitted.some((item) => item === undefined)) return undefined;
    const complete = fitted as FittedMessage[];
    const total = complete.reduce((sum, item) => sum + item.tokens, 0);
    if (total <= budgetTokens) return complete;
    room -= total - budgetTokens;
  }
  return undefined;
}

import type { MessageInput } from '../messages/message.js';

/** The parts of a message that cost tokens in a chat request. */
export type CountableMessage = Pick<MessageInput, 'role' | 'content' | 'name' | 'toolCalls' | 'toolCallId'>;

/**
 * Counts tokens the way the target model bills them. Implementations must be deterministic: the
 * engine stores each message's count at append and never re-tokenizes history.
 */
export interface TokenCounter {
  /** Name of the encoding, e.g. `o200k_base`; stored beside counts so a change of model is visible. */
  readonly encoding: string;
  /** Tokens every chat request adds once, on top of its messages (the assistant reply priming). */
  readonly requestOverheadTokens: number;
  /** Tokens of plain text, without any chat overhead. */
  countText(text: string): number;
  /** Tokens one message costs inside a chat request, role and framing included. */
  countMessage(message: CountableMessage): number;
  /** The longest prefix of `text` that encodes to at most `maxTokens` tokens (never splits a character). */
  truncateText(text: string, maxTokens: number): string;
}

import type { TokenCounter } from '../tokens/token-counter.js';
import type { ContextMessage } from './context-types.js';

/** The part of a summary a context needs. */
export interface SummaryInput {
  readonly id: string;
  readonly content: string;
  readonly toSeq: number;
  /** Tokens of the messages 1…toSeq that the summary stands for. */
  readonly coveredTokens: number;
  /** When the compaction that wrote it ran (ISO 8601); the facts block is taken as of then. */
  readonly createdAt?: string;
}

/** A summary placed in a context, possibly shortened to make room for the newest turn. */
export interface SummaryBlock {
  readonly message: ContextMessage;
  readonly tokens: number;
  readonly truncated: boolean;
}

/** Messages no summary block is shortened below: a stub of a summary misleads more than none. */
export const minSummaryBlockTokens = 32;

/** The memory block: a system message that says what the summary covers, so the model can weigh it. */
export function summaryBlock(
  summary: SummaryInput,
  counter: TokenCounter,
  maxTokens = Number.POSITIVE_INFINITY,
): SummaryBlock | undefined {
  const header = `Summary of the earlier conversation (messages 1–${summary.toSeq}):\n`;
  const whole: ContextMessage = { role: 'system', content: header + summary.content };
  const tokens = counter.countMessage(whole);
  if (tokens <= maxTokens) return { message: whole, tokens, truncated: false };
  if (maxTokens < minSummaryBlockTokens) return undefined;
  const marker = '\n[mnemo: summary shortened to fit the context budget]';
  const framing = counter.countMessage({ role: 'system', content: header + marker });
  for (let room = maxTokens - framing; room > 0; room -= 2) {
    const message: ContextMessage = {
      role: 'system',
      content: header + counter.truncateText(summary.content, room) + marker,
    };
    const cost = counter.countMessage(message);
    if (cost <= maxTokens) return { message, tokens: cost, truncated: true };
  }
  return undefined;
}

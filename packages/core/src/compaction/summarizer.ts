import type { SummarySourceMessage } from '../messages/summary-source-message.js';

/** A durable fact in the user's own words (a fact extractor's statement) and where it was said. */
export interface SummaryStatement {
  readonly text: string;
  /** Seq of the message that said it. */
  readonly seq: number;
  /** ISO 8601. */
  readonly createdAt: string;
}

/** What to summarize: the running summary so far (folded in, never dropped) and the next messages. */
export interface SummarizeInput {
  readonly previousSummary?: string;
  readonly messages: readonly SummarySourceMessage[];
  /**
   * The user's current facts said in the range the summary covers: carried ahead of other material,
   * once each, while they fit (compaction passes them when `keepFacts` is on).
   */
  readonly keep?: readonly SummaryStatement[];
  /** Statements no longer true (superseded facts): sentences that repeat them are left out of the summary. */
  readonly drop?: readonly string[];
  /** Upper bound of the result, in tokens of the engine's encoding. */
  readonly maxSummaryTokens: number;
  readonly signal?: AbortSignal;
}

/** A summary and what producing it cost. */
export interface SummarizeResult {
  readonly content: string;
  /** Id of the implementation that wrote this text, e.g. `extractive@1` or `openai:gpt-4o-mini`. */
  readonly summarizer: string;
  /** Tokens of the prompt an LLM summarizer sends (for the offline one: the prompt it would have sent). */
  readonly inputTokens: number;
  /** Tokens of the summary text. */
  readonly outputTokens: number;
  /** Set when the configured summarizer failed and a fallback wrote this text: why it failed. */
  readonly fallbackReason?: string;
}

/**
 * Turns a previous summary plus a range of messages into a new summary that covers both. Must return
 * at most `maxSummaryTokens` tokens. Failures are `MemoryError`s (`model_failed` for an LLM).
 */
export interface Summarizer {
  readonly id: string;
  summarize(input: SummarizeInput): Promise<SummarizeResult>;
}

/** A stored summary: what it covers, what it folded, who wrote it and what it cost. All versions are kept. */
export interface Summary {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly conversationId: string;
  /** 0 for a summary written from messages (folding the previous one); n + 1 for a condensation of a level-n summary. */
  readonly level: number;
  /** First and last seq of the messages this summary stands for (a rolling summary starts at 1). */
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly content: string;
  /** Tokens of `content` as a context part, counted with the engine's counter. */
  readonly tokens: number;
  /** Ids of the summaries this one folded in (provenance): expand them to walk back to the messages. */
  readonly foldedSummaryIds: readonly string[];
  /** Id of the summarizer that wrote it, e.g. `extractive@1`. */
  readonly summarizer: string;
  /** Prompt and output tokens the compaction cost (for the offline summarizer: what an LLM call would have cost). */
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Why the configured summarizer failed, when a fallback wrote this summary. */
  readonly fallbackReason?: string;
  /** ISO 8601. */
  readonly createdAt: string;
}

/** A summary before the store gives it an id. */
export type NewSummary = Omit<Summary, 'id' | 'tenantId' | 'userId' | 'conversationId'>;

/** Kinds of entries in the usage ledger: a context build, or a summarizer call made by compaction. */
export const usageKinds = ['context', 'summarize'] as const;

/** One of {@link usageKinds}. */
export type UsageKind = (typeof usageKinds)[number];

/** One ledger entry: what a context build sent against what the full history would have cost, or what a summarizer call cost. */
export interface UsageRecord {
  readonly kind: UsageKind;
  /** Policy that built the context; for `summarize`, the summarizer id. */
  readonly policy: string;
  /** Tokens sent in the request, request overhead included (0 for `summarize`). */
  readonly sentTokens: number;
  /** Tokens the same request would have cost with the whole history (0 for `summarize`). */
  readonly fullHistoryTokens: number;
  /** Summarizer prompt tokens (for the offline summarizer: what the LLM prompt would have cost); 0 for `context`. */
  readonly inputTokens?: number;
  /** Summarizer output tokens; 0 for `context`. */
  readonly outputTokens?: number;
  /** ISO 8601 time of the build. */
  readonly createdAt: string;
}

/** A ledger entry as stored: its record and its position, which grows in the order entries were written. */
export interface UsageEntry extends UsageRecord {
  readonly position: number;
}

/**
 * Sums over a conversation's ledger. `savedTokens = fullHistoryTokens − sentTokens`; `netSavedTokens`
 * also subtracts what compaction cost (`summarizerInputTokens + summarizerOutputTokens`).
 */
export interface UsageTotals {
  /** Context builds. */
  readonly requests: number;
  readonly sentTokens: number;
  readonly fullHistoryTokens: number;
  readonly savedTokens: number;
  /** Summarizer calls. */
  readonly compactions: number;
  readonly summarizerInputTokens: number;
  readonly summarizerOutputTokens: number;
  readonly netSavedTokens: number;
}

/** Builds {@link UsageTotals} from the four sums a store reads. */
export function toUsageTotals(sums: {
  requests: number;
  sentTokens: number;
  fullHistoryTokens: number;
  compactions: number;
  summarizerInputTokens: number;
  summarizerOutputTokens: number;
}): UsageTotals {
  const savedTokens = sums.fullHistoryTokens - sums.sentTokens;
  return {
    ...sums,
    savedTokens,
    netSavedTokens: savedTokens - sums.summarizerInputTokens - sums.summarizerOutputTokens,
  };
}

/** Percent of `full` saved by sending `sent` instead, 0–100 with one decimal; 0 when `full` is 0. */
export function savedPercent(sent: number, full: number): number {
  if (full <= 0) return 0;
  return Math.round(((full - sent) / full) * 1000) / 10;
}

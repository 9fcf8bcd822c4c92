/** Kinds of entries in the usage ledger. */
export const usageKinds = ['context'] as const;

/** One of {@link usageKinds}. */
export type UsageKind = (typeof usageKinds)[number];

/** One ledger entry: what a context build sent, against what the full history would have cost. */
export interface UsageRecord {
  readonly kind: UsageKind;
  /** Policy that built the context. */
  readonly policy: string;
  /** Tokens sent in the request, request overhead included. */
  readonly sentTokens: number;
  /** Tokens the same request would have cost with the whole history. */
  readonly fullHistoryTokens: number;
  /** ISO 8601 time of the build. */
  readonly createdAt: string;
}

/** Sums over a conversation's ledger; `savedTokens = fullHistoryTokens − sentTokens`. */
export interface UsageTotals {
  readonly requests: number;
  readonly sentTokens: number;
  readonly fullHistoryTokens: number;
  readonly savedTokens: number;
}

/** Percent of `full` saved by sending `sent` instead, 0–100 with one decimal; 0 when `full` is 0. */
export function savedPercent(sent: number, full: number): number {
  if (full <= 0) return 0;
  return Math.round(((full - sent) / full) * 1000) / 10;
}

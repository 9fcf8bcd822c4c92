import { MemoryError } from '../errors/memory-error.js';

/**
 * When and how much to compact. Token mode: compact once the raw (unsummarized) tokens pass
 * `triggerTokens`, keeping the newest `keepRecentTokens` raw. Message mode (`everyMessages` set): compact
 * once `everyMessages` raw messages have accumulated beyond the `keepRecentTurns` kept verbatim.
 */
export interface CompactionSettings {
  /** Raw tokens that start a compaction; set it below the context budget so it happens before the limit. */
  readonly triggerTokens: number;
  /** Raw tokens kept verbatim after a compaction (newest whole turns). */
  readonly keepRecentTokens: number;
  /** At least this many newest turns stay raw, whatever their size. */
  readonly keepRecentTurns: number;
  /** Message mode: compact after this many new raw messages beyond the kept turns (the seed's incremental summary). */
  readonly everyMessages?: number;
  /** Upper bound of a summary; past it the summary is condensed into the next level. */
  readonly maxSummaryTokens: number;
  /** Most tokens of messages one summarizer call reads; a larger backlog is folded in several rounds. */
  readonly maxSourceTokensPerRound: number;
}

/** Defaults for a 2,000-token context: compact at 1,200 raw tokens, keep ~600 raw, summary ≤ 400. */
export const defaultCompactionSettings: CompactionSettings = Object.freeze({
  triggerTokens: 1200,
  keepRecentTokens: 600,
  keepRecentTurns: 2,
  maxSummaryTokens: 400,
  maxSourceTokensPerRound: 6000,
});

/** Named settings; `meshai` reproduces the founding bot: keep the last 4 exchanges, re-summarize every 8 messages. */
export const compactionPresets = Object.freeze({
  default: defaultCompactionSettings,
  meshai: Object.freeze({ ...defaultCompactionSettings, keepRecentTurns: 4, keepRecentTokens: 0, everyMessages: 8, maxSummaryTokens: 300 }),
} satisfies Record<string, CompactionSettings>);

/** Merges and checks settings; throws `invalid_input` naming the field. */
export function resolveCompactionSettings(settings: Partial<CompactionSettings> = {}): CompactionSettings {
  const merged = { ...defaultCompactionSettings, ...settings };
  for (const field of ['triggerTokens', 'keepRecentTokens', 'keepRecentTurns', 'maxSummaryTokens', 'maxSourceTokensPerRound'] as const) {
    checkCount(field, merged[field]);
  }
  if (merged.everyMessages !== undefined) checkCount('everyMessages', merged.everyMessages, 1);
  if (merged.maxSummaryTokens < 16) throw new MemoryError('invalid_input', 'maxSummaryTokens must be at least 16', { details: { field: 'maxSummaryTokens' } });
  return Object.freeze(merged);
}

function checkCount(field: string, value: unknown, min = 0): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new MemoryError('invalid_input', `${field} must be an integer ≥ ${min} (got ${JSON.stringify(value)})`, { details: { field } });
  }
}

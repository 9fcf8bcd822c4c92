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
  /**
   * Give the summarizer the facts the fact extractor recorded from the summarized range as statements to
   * keep, and the superseded ones as statements to leave out (decision 0022). Default true; it needs fact
   * extraction on (`knowledge`), and does nothing without it.
   */
  readonly keepFacts: boolean;
}

/**
 * The library's compaction settings for a context budget (`createMemory` passes its default
 * `context.maxTokens`): compact once the raw turns pass 20 % of the budget, keep only the newest 2 turns
 * (the question in flight and the exchange before it) raw, whatever their size, and bound the summary
 * at 14 % of the budget. Every request then carries at most ≈ 34 % of the budget in memory plus two
 * turns, so short messages (a mesh chat's ≈ 25 tokens) are compacted every few exchanges and long ones
 * every exchange or two; each summarizer call still folds several turns. Chosen against the seed's
 * rolling summary (`bench:tokens`, `bench:survival`; decisions 0011 and 0022: 14 %, not 15 %, because
 * a summary that keeps fact lines packs its bound fuller). A budget below 100 tokens is
 * treated as 100. Throws `invalid_input` for a budget that is not a positive integer.
 */
export function compactionSettingsForBudget(budget: number): CompactionSettings {
  if (!Number.isInteger(budget) || budget < 1) {
    throw new MemoryError('invalid_input', `the compaction budget must be a positive integer (got ${JSON.stringify(budget)})`, { details: { field: 'maxTokens' } });
  }
  const maxTokens = Math.max(100, budget);
  return Object.freeze({
    triggerTokens: Math.round(maxTokens * 0.2),
    keepRecentTokens: 0,
    keepRecentTurns: 2,
    maxSummaryTokens: Math.max(16, Math.round(maxTokens * 0.14)),
    maxSourceTokensPerRound: Math.max(6000, maxTokens * 3),
    keepFacts: true,
  });
}

/** {@link compactionSettingsForBudget} of the built-in 2,000-token context: compact at 400 raw tokens, keep 2 turns, summary ≤ 280. */
export const defaultCompactionSettings: CompactionSettings = compactionSettingsForBudget(2000);

/** Named settings; `meshai` reproduces the founding bot: keep the last 4 exchanges, re-summarize every 8 messages. */
export const compactionPresets = Object.freeze({
  default: defaultCompactionSettings,
  meshai: Object.freeze({ ...defaultCompactionSettings, keepRecentTurns: 4, keepRecentTokens: 0, everyMessages: 8, maxSummaryTokens: 300 }),
} satisfies Record<string, CompactionSettings>);

/** Merges settings over the defaults for a budget (default {@link defaultCompactionSettings}) and checks them; throws `invalid_input` naming the field. */
export function resolveCompactionSettings(settings: Partial<CompactionSettings> = {}, base: CompactionSettings = defaultCompactionSettings): CompactionSettings {
  const merged = { ...base, ...settings };
  for (const field of ['triggerTokens', 'keepRecentTokens', 'keepRecentTurns', 'maxSummaryTokens', 'maxSourceTokensPerRound'] as const) {
    checkCount(field, merged[field]);
  }
  if (merged.everyMessages !== undefined) checkCount('everyMessages', merged.everyMessages, 1);
  if (typeof merged.keepFacts !== 'boolean') {
    throw new MemoryError('invalid_input', `keepFacts must be true or false (got ${JSON.stringify(merged.keepFacts)})`, { details: { field: 'keepFacts' } });
  }
  if (merged.maxSummaryTokens < 16) throw new MemoryError('invalid_input', 'maxSummaryTokens must be at least 16', { details: { field: 'maxSummaryTokens' } });
  return Object.freeze(merged);
}

function checkCount(field: string, value: unknown, min = 0): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new MemoryError('invalid_input', `${field} must be an integer ≥ ${min} (got ${JSON.stringify(value)})`, { details: { field } });
  }
}

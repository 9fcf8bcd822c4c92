import { MemoryError } from '../errors/memory-error.js';

/**
 * When and how much to compact. Token mode: compact once the raw (unsummarized) tokens pass
 * `triggerTokens`, keeping the newest `keepRecentTokens` raw. Message mode (`everyMessages` set): compact
 * once `everyMessages` raw messages have accumulated beyond the `keepRecentTurns` kept verbatim.
 */
export interface CompactionSettings {
  /** Raw tokens that start a compaction (the high mark); set it below the context budget so it happens before the limit. */
  readonly triggerTokens: number;
  /**
   * Raw tokens a conversation never compacted may reach before its first compaction (default
   * `triggerTokens`): one that still fits the context budget stays verbatim, as full history would send it.
   */
  readonly verbatimTokens?: number;
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

/** The price of a cached input token as a share of an uncached one, assumed by default: today's common 10 %. */
export const defaultCachedPriceRatio = 0.1;

/** Options of {@link compactionSettingsForBudget}'s cost model. */
export interface CompactionCostOptions {
  /** Price of a cached prompt token as a share of an uncached one, 0–1 (1: no caching). Default {@link defaultCachedPriceRatio}. */
  readonly cachedPriceRatio?: number;
  /** Raw tokens one exchange adds, the model's estimate; default 80 (LoCoMo's exchanges average 73, a mesh chat's 50). */
  readonly exchangeTokens?: number;
}

/** Shares of the budget the raw turns may grow to at most and at least before a fold (the hybrid context's facts, summary and recall take the rest). */
const highMarkShares = Object.freeze({ min: 0.15, max: 0.65 });

/** The shortest prefix a provider caches (OpenAI: 1,024 tokens, then in steps of 128); a shorter one is paid in full. */
export const minCachedPrefixTokens = 1024;

/** The high and low marks of the raw turns a cache-aware compaction keeps between (see {@link cacheAwareMarks}). */
export interface FoldMarks {
  /** Raw tokens at which a fold starts. */
  readonly high: number;
  /** Raw tokens a fold keeps (newest whole turns), so the prefix after it is long enough to be cached. */
  readonly low: number;
}

/**
 * The raw tokens at which a fold starts (the high mark H) and the raw tokens it keeps (the low mark L),
 * chosen by a cost model of the requests between two folds (decision 0034). The raw turns grow
 * append-only from L to H, so a request carries on average M + (H + L) / 2 cached prompt tokens (M: the
 * system prompt and the memory block, facts and summary), priced at the cached ratio r. A fold costs a
 * cache miss of the whole new prefix, (1 − r)·(M + L), plus the summarizer's own tokens beyond the turns
 * it reads (the previous summary in, the new one out: 2 × its bound), once every (H − L) / d requests
 * for d raw tokens an exchange. Per request that is r·(M + (H + L)/2) + ((1 − r)·(M + L) + S)·d / (H − L),
 * least at H − L = √(2·((1 − r)·(M + L) + S)·d / r): cheap cached tokens make long append-only runs pay
 * (at 10 % the high mark is all the budget lets the raw turns have), full-price ones short ones. L is
 * the least that keeps M + L at the provider's minimum cached prefix: below it every request until the
 * prefix grows past the minimum pays full price; every token more is paid (cached) on every request.
 * With no caching (r = 1) L is 0 (the newest `keepRecentTurns` only).
 */
export function cacheAwareMarks(budget: number, summaryTokens: number, options: CompactionCostOptions = {}): FoldMarks {
  const ratio = options.cachedPriceRatio ?? defaultCachedPriceRatio;
  const exchange = options.exchangeTokens ?? 80;
  const memory = Math.round(budget * 0.15) + summaryTokens;
  const high = Math.round(budget * highMarkShares.max);
  // The low mark only when the budget leaves room for a run of folds above it (at least 4 exchanges). The
  // summary alone is counted as the memory here: the facts block may be empty, and a prefix one fact
  // short of the minimum is not cached at all.
  const cacheLow = Math.max(0, minCachedPrefixTokens + 128 - summaryTokens);
  const low = ratio < 1 && cacheLow + 4 * exchange <= high ? cacheLow : 0;
  const foldCost = (1 - ratio) * (memory + low) + 2 * summaryTokens;
  const step = ratio <= 0 ? Number.POSITIVE_INFINITY : Math.sqrt((2 * foldCost * exchange) / ratio);
  return { high: Math.round(Math.min(high, Math.max(budget * highMarkShares.min, low + step))), low };
}

/**
 * The library's compaction settings for a context budget (`createMemory` passes its default
 * `context.maxTokens`), scheduled for prompt caches (invariant 7, decision 0034): a conversation stays
 * verbatim until it reaches 90 % of the budget; from then on the raw turns grow append-only until they
 * pass the high mark of {@link cacheAwareMarks} (65 % of the budget at the default 10 % cached price),
 * and one fold takes them back to its low mark (what keeps the prefix cacheable; at least the newest 2
 * turns); the summary is bounded at 14 % of the budget. The summary bound and the
 * kept turns were chosen against the seed's rolling summary (`bench:tokens`, `bench:survival`;
 * decisions 0011 and 0022). A budget below 100 tokens is treated as 100. Throws `invalid_input` for a
 * budget that is not a positive integer or a price ratio outside 0–1.
 */
export function compactionSettingsForBudget(budget: number, costs: CompactionCostOptions = {}): CompactionSettings {
  if (!Number.isInteger(budget) || budget < 1) {
    throw new MemoryError(
      'invalid_input',
      `the compaction budget must be a positive integer (got ${JSON.stringify(budget)})`,
      {
        details: { field: 'maxTokens' },
      },
    );
  }
  const ratio = costs.cachedPriceRatio ?? defaultCachedPriceRatio;
  if (typeof ratio !== 'number' || !Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw new MemoryError(
      'invalid_input',
      `cachedPriceRatio must be a number from 0 to 1 (got ${JSON.stringify(ratio)})`,
      {
        details: { field: 'cachedPriceRatio' },
      },
    );
  }
  const maxTokens = Math.max(100, budget);
  const maxSummaryTokens = Math.max(16, Math.round(maxTokens * 0.14));
  const marks = cacheAwareMarks(maxTokens, maxSummaryTokens, costs);
  return Object.freeze({
    triggerTokens: marks.high,
    // Verbatim while it fits: the hybrid context sends a conversation whole up to its budget.
    verbatimTokens: Math.round(maxTokens * 0.9),
    keepRecentTokens: marks.low,
    keepRecentTurns: 2,
    maxSummaryTokens,
    maxSourceTokensPerRound: Math.max(6000, maxTokens * 3),
    keepFacts: true,
  });
}

/** {@link compactionSettingsForBudget} of the built-in 2,000-token context: verbatim to 1,800 tokens, then fold at 1,300 raw tokens down to 872, summary ≤ 280. */
export const defaultCompactionSettings: CompactionSettings = compactionSettingsForBudget(2000);

/** Named settings; `meshai` reproduces the founding bot: keep the last 4 exchanges, re-summarize every 8 messages. */
export const compactionPresets = Object.freeze({
  default: defaultCompactionSettings,
  meshai: Object.freeze({
    ...defaultCompactionSettings,
    keepRecentTurns: 4,
    keepRecentTokens: 0,
    everyMessages: 8,
    maxSummaryTokens: 300,
  }),
} satisfies Record<string, CompactionSettings>);

/** Merges settings over the defaults for a budget (default {@link defaultCompactionSettings}) and checks them; throws `invalid_input` naming the field. */
export function resolveCompactionSettings(
  settings: Partial<CompactionSettings> = {},
  base: CompactionSettings = defaultCompactionSettings,
): CompactionSettings {
  // A trigger set by hand is the first compaction's too, unless the verbatim mark is set with it.
  const ownTrigger = settings.triggerTokens !== undefined && !('verbatimTokens' in settings);
  const { verbatimTokens: baseVerbatim, ...rest } = base;
  const merged: CompactionSettings = {
    ...rest,
    ...(ownTrigger || baseVerbatim === undefined ? {} : { verbatimTokens: baseVerbatim }),
    ...settings,
  };
  if (merged.verbatimTokens !== undefined) checkCount('verbatimTokens', merged.verbatimTokens);
  for (const field of [
    'triggerTokens',
    'keepRecentTokens',
    'keepRecentTurns',
    'maxSummaryTokens',
    'maxSourceTokensPerRound',
  ] as const) {
    checkCount(field, merged[field]);
  }
  if (merged.everyMessages !== undefined) checkCount('everyMessages', merged.everyMessages, 1);
  if (typeof merged.keepFacts !== 'boolean') {
    throw new MemoryError(
      'invalid_input',
      `keepFacts must be true or false (got ${JSON.stringify(merged.keepFacts)})`,
      {
        details: { field: 'keepFacts' },
      },
    );
  }
  if (merged.maxSummaryTokens < 16)
    throw new MemoryError('invalid_input', 'maxSummaryTokens must be at least 16', {
      details: { field: 'maxSummaryTokens' },
    });
  return Object.freeze(merged);
}

function checkCount(field: string, value: unknown, min = 0): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new MemoryError('invalid_input', `${field} must be an integer ≥ ${min} (got ${JSON.stringify(value)})`, {
      details: { field },
    });
  }
}

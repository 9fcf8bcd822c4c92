import { compactionPresets, defaultCompactionSettings, type CompactionSettings } from '@mnemo/core';

/** A way of running the `summary` context policy: a name for the tables and the compaction settings behind it. */
export interface CompactionVariant {
  readonly name: string;
  /** The settings as passed to `createMemory({ compaction: { settings } })`; missing fields take core's defaults. */
  readonly settings: Partial<CompactionSettings>;
  /** One line for the reader: where the settings come from. */
  readonly description: string;
}

/**
 * Settings for short mesh messages (≈ 25 tokens each, ≈ 50 an exchange), chosen on a different chat
 * (generator seed 42) than the one the tables report (seed 7), so they are not fitted to it: compact
 * once ≈ 6 exchanges are raw, so each summarizer call folds ≈ 5 exchanges and its fixed prompt cost
 * (≈ 140 tokens of instructions) is spread over them; keep only the question in flight and the
 * previous exchange verbatim; bound the summary at 150 tokens, room for ≈ 10 short facts.
 */
export const meshTunedSettings: Partial<CompactionSettings> = Object.freeze({
  triggerTokens: 300,
  keepRecentTokens: 0,
  keepRecentTurns: 2,
  maxSummaryTokens: 150,
});

/**
 * The CLI's thresholds for a budget, as `compactionSettingsForBudget` in packages/cli computes them (the
 * CLI package exports no library, so the formula is repeated here): compact at 60 % of the budget, keep
 * 30 % raw, summary ≤ 20 %. `mnemo replay --policy summary` and `mnemo chat` run with these.
 */
export function budgetScaledSettings(maxTokens: number): Partial<CompactionSettings> {
  return Object.freeze({
    triggerTokens: Math.round(maxTokens * 0.6),
    keepRecentTokens: Math.round(maxTokens * 0.3),
    maxSummaryTokens: Math.max(16, Math.round(maxTokens * 0.2)),
  });
}

function describe(settings: Partial<CompactionSettings>): string {
  const merged = { ...defaultCompactionSettings, ...settings };
  const trigger = merged.everyMessages === undefined ? `compact at ${merged.triggerTokens} raw tokens` : `compact every ${merged.everyMessages} messages`;
  const keep = `keep ${merged.keepRecentTurns} turns${merged.everyMessages === undefined && merged.keepRecentTokens > 0 ? ` / ${merged.keepRecentTokens} tokens` : ''} raw`;
  return `${trigger}, ${keep}, summary ≤ ${merged.maxSummaryTokens} tokens`;
}

/** The summary variants the benchmarks compare for a context budget, in table order; all summarize with core's offline `ExtractiveSummarizer`. */
export function createCompactionVariants(maxTokens: number): readonly CompactionVariant[] {
  const budgetScaled = budgetScaledSettings(maxTokens);
  return Object.freeze([
    { name: 'summary', settings: {}, description: `library defaults (defaultCompactionSettings): ${describe({})}` },
    { name: 'summary (budget-scaled)', settings: budgetScaled, description: `the CLI's thresholds for budget ${maxTokens.toLocaleString('en-US')}: ${describe(budgetScaled)}` },
    { name: 'meshai', settings: compactionPresets.meshai, description: `compactionPresets.meshai: ${describe(compactionPresets.meshai)}` },
    { name: 'summary (mesh-tuned)', settings: meshTunedSettings, description: `tuned for short mesh messages on seed 42: ${describe(meshTunedSettings)}` },
  ]);
}

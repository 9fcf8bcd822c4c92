import { compactionPresets, compactionSettingsForBudget, type CompactionSettings } from '@mnemo/core';

/** A way of running the `summary` context policy: a name for the tables and the compaction settings behind it. */
export interface CompactionVariant {
  readonly name: string;
  /** The settings as passed to `createMemory({ compaction: { settings } })`; missing fields take core's defaults for the budget. */
  readonly settings: Partial<CompactionSettings>;
  /** One line for the reader: where the settings come from. */
  readonly description: string;
}

/**
 * The seed's own rolling summary (MEMORY_RESEARCH option 5), run by mnemo's compactor with the same
 * summarizer: the last 4 exchanges stay raw; once 10 more messages than those have gone unsummarized,
 * they are folded with the old summary into a new one of at most 150 tokens; each request sends the
 * summary and the raw messages after it. The seed has no fact store, so compaction is given no facts
 * to keep (`keepFacts: false`).
 */
export const seedRollingSettings: Partial<CompactionSettings> = Object.freeze({
  keepRecentTurns: 4,
  keepRecentTokens: 0,
  everyMessages: 10,
  maxSummaryTokens: 150,
  keepFacts: false,
});

function describe(settings: Partial<CompactionSettings>, maxTokens: number): string {
  const merged = { ...compactionSettingsForBudget(maxTokens), ...settings };
  const trigger =
    merged.everyMessages === undefined
      ? `compact at ${merged.triggerTokens} raw tokens`
      : `compact every ${merged.everyMessages} messages`;
  const keep = `keep ${merged.keepRecentTurns} turns${merged.everyMessages === undefined && merged.keepRecentTokens > 0 ? ` / ${merged.keepRecentTokens} tokens` : ''} raw`;
  return `${trigger}, ${keep}, summary ≤ ${merged.maxSummaryTokens} tokens`;
}

/**
 * The summary variants the benchmarks compare for a context budget, in table order; all summarize with
 * core's offline `ExtractiveSummarizer`, and every memory is created with `context.maxTokens` = the
 * budget, so `summary` runs the library's defaults for that budget (`compactionSettingsForBudget`).
 */
export function createCompactionVariants(maxTokens: number): readonly CompactionVariant[] {
  return Object.freeze([
    {
      name: 'seed (rolling summary)',
      settings: seedRollingSettings,
      description: `the seed's algorithm, MEMORY_RESEARCH option 5: ${describe(seedRollingSettings, maxTokens)}`,
    },
    {
      name: 'summary',
      settings: {},
      description: `library defaults for budget ${maxTokens.toLocaleString('en-US')} (compactionSettingsForBudget): ${describe({}, maxTokens)}`,
    },
    {
      name: 'meshai',
      settings: compactionPresets.meshai,
      description: `compactionPresets.meshai: ${describe(compactionPresets.meshai, maxTokens)}`,
    },
  ]);
}

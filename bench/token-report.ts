import type { SeedAlgorithmCheck, SeedComparison } from './compare-with-seed.js';
import type { CompactionCostSeries } from './replay-compaction-costs.js';
import { replayPolicies, type ReplayPolicy, type ReplayResult } from './replay-token-costs.js';

/** The results of one dataset: a row per conversation size, or why the dataset was skipped. */
export interface DatasetReport {
  readonly name: string;
  /** Where the conversation came from, for the reader. */
  readonly source: string;
  readonly notes: readonly string[];
  readonly rows: readonly ReplayResult[];
  /** Mean `buildContext` latency per policy over every build of the dataset, in µs. */
  readonly meanLatencyMicroseconds: Readonly<Record<ReplayPolicy, number>>;
  /** Set when the dataset could not be loaded; `rows` is then empty. */
  readonly skipped?: string;
  /** The summary policy under each compaction variant, a row per size (one replay per variant). */
  readonly compaction?: readonly CompactionCostSeries[];
  /** The seed's own table beside the variants, for the mesh-radio datasets. */
  readonly seedComparison?: SeedComparison;
  /** `summary` (library defaults) against the seed's own algorithm on this dataset (the bar). */
  readonly seedAlgorithmCheck?: SeedAlgorithmCheck;
}

/** What `bench/tokens.ts` writes to `bench/results/tokens.json`. */
export interface TokenReport {
  readonly benchmark: 'tokens';
  readonly createdAt: string;
  readonly settings: {
    readonly maxTokens: number;
    readonly windowTurns: number;
    readonly system: string;
    readonly encoding: string;
    readonly budgets: Readonly<Record<ReplayPolicy, string>>;
    /** How the compaction columns are defined (also in bench/README.md). */
    readonly compactionDefinitions: readonly string[];
    /** The seed's "full vs rolling summary" figures, saved percent per request by conversation length. */
    readonly seedSavedPercent: Readonly<Record<number, number>>;
  };
  readonly datasets: readonly DatasetReport[];
}

/** Mean latency per policy over all rows, weighted by each row's number of builds, in µs (one decimal). */
export function meanLatencyByPolicy(rows: readonly ReplayResult[]): Record<ReplayPolicy, number> {
  const entries = replayPolicies.map((policy) => {
    const requests = rows.reduce((sum, row) => sum + row.policies[policy].requests, 0);
    const totalMicroseconds = rows.reduce(
      (sum, row) => sum + row.policies[policy].meanLatencyMicroseconds * row.policies[policy].requests,
      0,
    );
    return [policy, requests === 0 ? 0 : Math.round((totalMicroseconds / requests) * 10) / 10] as const;
  });
  return Object.fromEntries(entries) as Record<ReplayPolicy, number>;
}

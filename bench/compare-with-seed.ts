import type { CompactionCostSeries } from './replay-compaction-costs.js';
import { seedSavedPercent, seedTargetSizes, seedTargetVariant } from './seed-savings.js';

/** One size of the seed's table beside what each summary variant saved there, per request, gross and net. */
export interface SeedComparisonRow {
  readonly messages: number;
  readonly seedSavedPercent: number;
  /** Per variant name: saved per request without and with the summarizer's tokens. */
  readonly variants: Readonly<Record<string, { readonly savedPercent: number; readonly netSavedPercent: number }>>;
}

/** Whether a variant meets the seed at a target size, net of summarizer tokens, and by how many points it misses. */
export interface SeedTargetCheck {
  readonly messages: number;
  readonly seedSavedPercent: number;
  readonly netSavedPercent: number;
  readonly met: boolean;
  /** `seedSavedPercent − netSavedPercent` when not met, else 0; in percentage points. */
  readonly shortByPoints: number;
}

/** The seed's table beside the variants, and the target checked for every variant (the target is judged on {@link seedTargetVariant}). */
export interface SeedComparison {
  readonly targetVariant: string;
  readonly rows: readonly SeedComparisonRow[];
  /** Per variant: the check at each target size. */
  readonly targets: Readonly<Record<string, readonly SeedTargetCheck[]>>;
  /** True when {@link seedTargetVariant} meets the seed at every target size. */
  readonly targetMet: boolean;
}

/** Puts the seed's figures beside the variants' per-request savings at the seed's sizes; `undefined` when no seed size was replayed. */
export function compareWithSeed(series: readonly CompactionCostSeries[]): SeedComparison | undefined {
  const sizes = Object.keys(seedSavedPercent).map(Number);
  const rowAt = (entry: CompactionCostSeries, size: number) => entry.rows.find((row) => row.messages === size);
  const rows = sizes.flatMap((size): SeedComparisonRow[] => {
    const variants = Object.fromEntries(
      series.flatMap((entry) => {
        const row = rowAt(entry, size);
        return row === undefined
          ? []
          : [
              [
                entry.variant,
                { savedPercent: row.savedPercentPerRequest, netSavedPercent: row.netSavedPercentPerRequest },
              ],
            ];
      }),
    );
    return Object.keys(variants).length === 0
      ? []
      : [{ messages: size, seedSavedPercent: seedSavedPercent[size]!, variants }];
  });
  if (rows.length === 0) return undefined;
  const targets = Object.fromEntries(
    series.map((entry) => [
      entry.variant,
      seedTargetSizes.flatMap((size): SeedTargetCheck[] => {
        const row = rowAt(entry, size);
        if (row === undefined) return [];
        const seed = seedSavedPercent[size]!;
        const met = row.netSavedPercentPerRequest >= seed;
        return [
          {
            messages: size,
            seedSavedPercent: seed,
            netSavedPercent: row.netSavedPercentPerRequest,
            met,
            shortByPoints: met ? 0 : Math.round((seed - row.netSavedPercentPerRequest) * 10) / 10,
          },
        ];
      }),
    ]),
  );
  const judged = targets[seedTargetVariant] ?? [];
  return {
    targetVariant: seedTargetVariant,
    rows,
    targets,
    targetMet: judged.length === seedTargetSizes.length && judged.every((check) => check.met),
  };
}

/** The bar against the seed's algorithm, judged on one dataset's replay. */
export interface SeedAlgorithmCheck {
  readonly variant: string;
  readonly against: string;
  /** Sizes ≥ {@link seedAlgorithmFromMessages} where `variant` sent more per request than `against`; empty = met. */
  readonly perRequestOver: readonly { readonly messages: number; readonly sent: number; readonly seed: number }[];
  /** Σ sent + Σ summarizer tokens up to {@link seedAlgorithmTotalAt} messages, for both; undefined when that size was not replayed. */
  readonly totalAt?: { readonly messages: number; readonly total: number; readonly seed: number };
  readonly met: boolean;
}

/** From this length on, `summary` must send no more per request than the seed's algorithm. */
export const seedAlgorithmFromMessages = 20;

/** By this length, `summary` must have spent no more in total (summarizer included) than the seed's algorithm. */
export const seedAlgorithmTotalAt = 50;

/** Checks `summary` (library defaults) against the `seed (rolling summary)` row; `undefined` when either row is missing. */
export function checkAgainstSeedAlgorithm(
  series: readonly CompactionCostSeries[],
  variant = seedTargetVariant,
  against = 'seed (rolling summary)',
): SeedAlgorithmCheck | undefined {
  const mine = series.find((entry) => entry.variant === variant);
  const seed = series.find((entry) => entry.variant === against);
  if (mine === undefined || seed === undefined) return undefined;
  const perRequestOver = mine.rows.flatMap((row) => {
    const other = seed.rows.find((candidate) => candidate.messages === row.messages);
    return other !== undefined &&
      row.messages >= seedAlgorithmFromMessages &&
      row.sentTokensPerRequest > other.sentTokensPerRequest
      ? [{ messages: row.messages, sent: row.sentTokensPerRequest, seed: other.sentTokensPerRequest }]
      : [];
  });
  const total = (entry: CompactionCostSeries) => {
    const row = entry.rows.find((candidate) => candidate.messages === seedAlgorithmTotalAt);
    return row === undefined ? undefined : row.totalSentTokens + row.summarizerInputTokens + row.summarizerOutputTokens;
  };
  const [mineTotal, seedTotal] = [total(mine), total(seed)];
  const totalAt =
    mineTotal === undefined || seedTotal === undefined
      ? undefined
      : { messages: seedAlgorithmTotalAt, total: mineTotal, seed: seedTotal };
  return {
    variant,
    against,
    perRequestOver,
    ...(totalAt === undefined ? {} : { totalAt }),
    met: perRequestOver.length === 0 && (totalAt === undefined || totalAt.total <= totalAt.seed),
  };
}

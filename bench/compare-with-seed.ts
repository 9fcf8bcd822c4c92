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
        return row === undefined ? [] : [[entry.variant, { savedPercent: row.savedPercentPerRequest, netSavedPercent: row.netSavedPercentPerRequest }]];
      }),
    );
    return Object.keys(variants).length === 0 ? [] : [{ messages: size, seedSavedPercent: seedSavedPercent[size]!, variants }];
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
        return [{ messages: size, seedSavedPercent: seed, netSavedPercent: row.netSavedPercentPerRequest, met, shortByPoints: met ? 0 : Math.round((seed - row.netSavedPercentPerRequest) * 10) / 10 }];
      }),
    ]),
  );
  const judged = targets[seedTargetVariant] ?? [];
  return { targetVariant: seedTargetVariant, rows, targets, targetMet: judged.length === seedTargetSizes.length && judged.every((check) => check.met) };
}

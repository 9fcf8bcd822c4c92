import { CategoryMeans } from './category-means.js';
import { allEvidenceAt, anyEvidenceAt, evidenceFractionAt } from './locomo-score.js';
import { locomoCategories, type LocomoCategory, type LocomoSample } from './parse-locomo-dataset.js';

/** The cut-offs every ranking is scored at: the 5/10/25/50 and the baseline table's 20. */
export const rankingCutoffs = [5, 10, 20, 25, 50] as const;

/** Metric names of a ranking score, e.g. `frac@10`, `all@10`, `any@10`; percents 0–100. */
export const rankingMetrics: readonly string[] = rankingCutoffs.flatMap((k) => [`frac@${k}`, `all@${k}`, `any@${k}`]);

/** `n` (questions scored) and each of {@link rankingMetrics} in percent, one decimal. */
export type RankingSummary = Record<string, number | null>;

/** Turn-level evidence recall of a ranking, as LoCoMo's baseline tool reports it. */
export interface RankingScores {
  /** All five categories (the and the LoCoMo paper's "overall"). */
  readonly overall: RankingSummary;
  /** Categories 1–4 (the baseline tool's "overall"; adversarial on its own line). */
  readonly cat1to4: RankingSummary;
  readonly byCategory: Readonly<Record<string, RankingSummary>>;
  /** Questions left out because none of their evidence ids resolves to a turn, per category. */
  readonly skipped: { readonly noEvidence: number; readonly byCategory: Readonly<Record<string, number>> };
}

/** Categories 1–4: what the baseline calls overall. */
export const answerableCategories: readonly LocomoCategory[] = [1, 2, 3, 4];

/**
 * Scores rankings (`"<sample_id>#<qa_index>"` → turn ids, best first) the way
 * `tools/locomo_baselines.mjs --ranking` documents it: per question with evidence, all@k, any@k and the
 * fraction of evidence turns in the top k; questions without evidence are skipped and counted; a
 * question missing from `rankings` scores 0. Means per category, over categories 1–4, and over all five.
 */
export function scoreLocomoRankings(
  samples: readonly LocomoSample[],
  rankings: ReadonlyMap<string, readonly string[]>,
): RankingScores {
  const means = new CategoryMeans();
  const skipped: Record<string, number> = {};
  for (const sample of samples) {
    for (const question of sample.questions) {
      if (question.evidence.length === 0) {
        skipped[question.category] = (skipped[question.category] ?? 0) + 1;
        continue;
      }
      const ranking = rankings.get(question.key) ?? [];
      const values: Record<string, number> = {};
      for (const k of rankingCutoffs) {
        values[`frac@${k}`] = evidenceFractionAt(ranking, question.evidence, k);
        values[`all@${k}`] = allEvidenceAt(ranking, question.evidence, k) ? 1 : 0;
        values[`any@${k}`] = anyEvidenceAt(ranking, question.evidence, k) ? 1 : 0;
      }
      means.add(question.category, values);
    }
  }
  const summary = (categories: readonly LocomoCategory[]) => means.summary(rankingMetrics, categories, 100);
  return {
    overall: summary(locomoCategories),
    cat1to4: summary(answerableCategories),
    byCategory: Object.fromEntries(locomoCategories.map((category) => [String(category), summary([category])])),
    skipped: { noEvidence: Object.values(skipped).reduce((total, count) => total + count, 0), byCategory: skipped },
  };
}

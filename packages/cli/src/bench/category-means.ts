import { locomoCategories, type LocomoCategory } from './parse-locomo-dataset.js';

/** Means of named per-question metrics, kept per category so that any set of categories can be averaged. */
export class CategoryMeans {
  readonly #sums = new Map<LocomoCategory, Map<string, { sum: number; count: number }>>();
  readonly #questions = new Map<LocomoCategory, number>();

  /** Adds one question's values; an `undefined` value is left out of that metric's mean only. */
  add(category: LocomoCategory, values: Readonly<Record<string, number | undefined>>): void {
    this.#questions.set(category, (this.#questions.get(category) ?? 0) + 1);
    let sums = this.#sums.get(category);
    if (sums === undefined) this.#sums.set(category, (sums = new Map<string, { sum: number; count: number }>()));
    for (const [metric, value] of Object.entries(values)) {
      if (value === undefined) continue;
      const entry = sums.get(metric) ?? { sum: 0, count: 0 };
      sums.set(metric, { sum: entry.sum + value, count: entry.count + 1 });
    }
  }

  /** Questions added in these categories. */
  count(categories: readonly LocomoCategory[] = locomoCategories): number {
    return categories.reduce((total, category) => total + (this.#questions.get(category) ?? 0), 0);
  }

  /** Mean of `metric` over the questions of `categories` that have it, scaled by `scale`; `undefined` when none has it. */
  mean(metric: string, categories: readonly LocomoCategory[] = locomoCategories, scale = 1): number | undefined {
    let sum = 0;
    let count = 0;
    for (const category of categories) {
      const entry = this.#sums.get(category)?.get(metric);
      if (entry === undefined) continue;
      sum += entry.sum;
      count += entry.count;
    }
    return count === 0 ? undefined : (sum / count) * scale;
  }

  /** `n` and every metric's mean over `categories`, as `{ n, metric: value }` with values rounded to `digits`. */
  summary(
    metrics: readonly string[],
    categories: readonly LocomoCategory[] = locomoCategories,
    scale = 1,
    digits = 1,
  ): Record<string, number | null> {
    const result: Record<string, number | null> = { n: this.count(categories) };
    for (const metric of metrics) {
      const value = this.mean(metric, categories, scale);
      result[metric] = value === undefined ? null : round(value, digits);
    }
    return result;
  }
}

/** `value` rounded to `digits` decimals. */
export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

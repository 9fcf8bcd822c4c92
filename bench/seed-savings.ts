/**
 * The founding bot's own table, "full vs rolling summary": the share of a request's tokens its rolling
 * summary saved at 10 / 20 / 30 / 50 messages (keep the last 4 exchanges verbatim, re-summarize after 8
 * new messages). Its accounting is not published: it does not say whether the summary, the system prompt
 * or the summarizer calls are counted.
 */
export const seedSavedPercent: Readonly<Record<number, number>> = Object.freeze({ 10: 0, 20: 66, 30: 75, 50: 84 });

/** Sizes where the target applies: the default `summary` policy must meet or beat the seed there, net of summarizer tokens. */
export const seedTargetSizes: readonly number[] = Object.freeze([30, 50]);

/** The variant the target is judged on: the `summary` policy with the library's default compaction settings. */
export const seedTargetVariant = 'summary';

/**
 * Published turn-level evidence recall on LoCoMo to compare with, in percent (frac@k = mean fraction of
 * evidence turns in the top k), from `shared/data/locomo/BASELINES.md`: BM25 from the baseline tool,
 * DRAGON from the LoCoMo paper (Table 3). Keys are the file's category numbers; `overall` = categories 1–5.
 */
export const locomoBaselineFractions: Readonly<
  Record<'BM25' | 'DRAGON', Readonly<Record<number, Readonly<Record<string, number>>>>>
> = Object.freeze({
  BM25: {
    5: { '4': 58.7, '1': 18.1, '2': 60.7, '3': 23.2, '5': 58.0, overall: 51.4 },
    10: { '4': 65.3, '1': 27.2, '2': 68.3, '3': 28.0, '5': 65.1, overall: 58.6 },
    25: { '4': 74.0, '1': 36.6, '2': 73.0, '3': 34.1, '5': 74.8, overall: 66.8 },
    50: { '4': 77.6, '1': 41.1, '2': 77.4, '3': 38.8, '5': 77.4, overall: 70.5 },
  },
  DRAGON: {
    5: { '4': 68.0, '1': 35.4, '2': 70.4, '3': 33.1, '5': 43.9, overall: 56.7 },
    10: { '4': 77.7, '1': 46.6, '2': 77.3, '3': 40.8, '5': 54.7, overall: 66.2 },
    25: { '4': 87.1, '1': 62.5, '2': 83.5, '3': 52.6, '5': 66.3, overall: 76.7 },
    50: { '4': 91.1, '1': 73.0, '2': 89.6, '3': 61.7, '5': 72.5, overall: 82.7 },
  },
});

/** BM25 over categories 1–4 (the baseline tool's "overall", n = 1,536), in percent, from BASELINES.md. */
export const locomoBm25Answerable: Readonly<Record<string, number>> = Object.freeze({
  'frac@5': 49.5,
  'frac@10': 56.7,
  'frac@20': 63.1,
  'all@5': 45.6,
  'all@10': 51.8,
  'all@20': 57.6,
});

import { MemoryError, type RecallTuning } from '@mnemo/core';
import {
  inVectorSpace,
  prepareRecallCandidates,
  rankPreparedCandidates,
  recallTuning,
  vectorSpaceOf,
  type PreparedCandidates,
  type RecallCandidates,
} from '@mnemo/core/internals';
import { round } from './category-means.js';
import { locomoCategories, type LocomoCategory } from './parse-locomo-dataset.js';

/** The values each tuned constant takes in the cross-validation grid (the library default is always among them). */
export const recallGridValues = Object.freeze({
  rrfConstant: [5, 10],
  speakerBoost: [0.5, 1],
  neighbourShare: [0.3],
  episodeShare: [0.1, 0.2],
  timeBoost: [1, 2, 4],
  secondHopWeight: [0.3, 1],
  listDiversity: [0],
  listEpisodeFactor: [0, 1],
  episodeCoverage: [1, 2],
  lengthPrior: [0, 0.2, 0.3, 0.5],
  listSpeakerBoost: [0, 0.5, 1, 2],
} satisfies Partial<Record<keyof RecallTuning, readonly number[]>>);

/** A constant of {@link recallGridValues}. */
export type TunedConstant = keyof typeof recallGridValues;

/** Every combination of {@link recallGridValues} (each with the library's own value added), the other fields at the library's `recallTuning`. */
export function recallTuningGrid(): RecallTuning[] {
  let grid: RecallTuning[] = [recallTuning];
  for (const [field, values] of Object.entries(recallGridValues) as [TunedConstant, readonly number[]][]) {
    const withDefault = [...new Set([...values, recallTuning[field]])];
    grid = grid.flatMap((tuning) => withDefault.map((value) => ({ ...tuning, [field]: value })));
  }
  return grid;
}

/** One question's frac@10 under every tuning of a grid, and under BM25. */
export interface TunedQuestion {
  readonly key: string;
  readonly sampleId: string;
  readonly category: LocomoCategory;
  /** frac@10 of the BM25 baseline, 0–1. */
  readonly bm25: number;
  /** frac@10 per tuning, in grid order, 0–1. */
  readonly byTuning: Float32Array;
}

/** The cut-off the cross-validation chooses and reports on: frac@10, as the targets. */
export const foldCutoff = 10;

/**
 * frac@{@link foldCutoff} of one question under every tuning: its candidates ranked by each, the top
 * hits' seqs against the evidence turns' seqs.
 */
export function scoreTunings(
  candidates: RecallCandidates,
  evidenceSeqs: ReadonlySet<number>,
  tunings: readonly RecallTuning[],
): Float32Array {
  const scores = new Float32Array(tunings.length);
  // Without its weight the second hop is not searched at all (recall runs no second search), so those
  // tunings rank the first two lists alone, not with the second hop's extra candidates at weight 0.
  // Prepared once per second hop (or none) and vector space (`vectorSpaceOf`) a tuning can choose.
  const { secondHop: _, ...firstHop } = candidates;
  const preparations = new Map<string, PreparedCandidates>();
  const preparedFor = (tuning: RecallTuning) => {
    const space = vectorSpaceOf(candidates, tuning);
    const withSecondHop = tuning.secondHopWeight > 0 && candidates.secondHop !== undefined;
    const key = `${space} ${withSecondHop}`;
    let prepared = preparations.get(key);
    if (prepared === undefined) {
      prepared = prepareRecallCandidates(inVectorSpace(withSecondHop ? candidates : firstHop, space));
      preparations.set(key, prepared);
    }
    return prepared;
  };
  // Tunings that differ only in constants this question cannot feel (a list rule for a question that
  // asks for no list, a period boost without a period) rank it the same: each is ranked once.
  const byEffect = new Map<string, number>();
  tunings.forEach((tuning, index) => {
    const prepared = preparedFor(tuning);
    const effect = `${effectiveKey(tuning, prepared)} ${vectorSpaceOf(candidates, tuning)}`;
    let score = byEffect.get(effect);
    if (score === undefined) {
      const top = rankPreparedCandidates(prepared, tuning, foldCutoff).order.slice(0, foldCutoff);
      score = top.filter((at) => evidenceSeqs.has(prepared.hits[at]!.message.seq)).length / evidenceSeqs.size;
      byEffect.set(effect, score);
    }
    scores[index] = score;
  });
  return scores;
}

function effectiveKey(tuning: RecallTuning, prepared: PreparedCandidates): string {
  const effective: RecallTuning = {
    ...tuning,
    ...(prepared.list ? {} : { listDiversity: 0, listEpisodeFactor: 1, listSpeakerBoost: 0 }),
    ...(prepared.periods.length > 0 ? {} : { timeBoost: 0 }),
    ...(prepared.spoken.includes(1) ? {} : { speakerBoost: 0, listSpeakerBoost: 0 }),
    ...(prepared.termCount >= 2 ? {} : { episodeCoverage: 0 }),
    // The ratio counts only through the vector space it chooses (part of the key beside this).
    refinerChatRatio: 0,
  };
  return (Object.keys(recallTuning) as (keyof RecallTuning)[]).map((field) => effective[field]).join(',');
}

/** One held-out fold: which conversations, what the training folds chose, and how it scored there; percents. */
export interface FoldResult {
  readonly fold: number;
  readonly conversations: readonly string[];
  readonly n: number;
  /** The chosen tuning's constants that differ from the library's (empty: the defaults won). */
  readonly chosen: Partial<Record<TunedConstant, number>>;
  /** frac@10 of the chosen tuning on the training folds. */
  readonly training: number;
  /** frac@10 of the chosen tuning on this fold. */
  readonly heldOut: number;
  /** frac@10 of the library defaults on this fold. */
  readonly defaults: number;
  readonly bm25: number;
  /** heldOut − bm25, in points. */
  readonly gainOverBm25: number;
}

/** One cross-validated experiment: which constants the training folds could choose, and the folds. */
export interface CrossValidation {
  readonly experiment: string;
  readonly varied: readonly TunedConstant[];
  readonly folds: readonly FoldResult[];
  /** Mean over folds of the held-out frac@10, of the defaults' and of BM25's, and the gain. */
  readonly mean: {
    readonly heldOut: number;
    readonly defaults: number;
    readonly bm25: number;
    readonly gainOverBm25: number;
  };
  /** The fold with the lowest held-out score, and the lowest gain over BM25 of any fold. */
  readonly worst: { readonly fold: number; readonly heldOut: number; readonly gainOverBm25: number };
  /** What the same choice makes on every conversation at once (what a library default would be set to), and its frac@10 there. */
  readonly chosenOnAll: { readonly chosen: Partial<Record<TunedConstant, number>>; readonly score: number };
  /** Each question scored with the tuning its own held-out fold was given: frac@10 per category ("overall" = 1–5), beside BM25. */
  readonly byCategory: Readonly<
    Record<string, { readonly n: number; readonly heldOut: number; readonly bm25: number }>
  >;
}

// The constants tuned before the length prior and the list speaker boost.
const withoutLengthAndListSpeaker: readonly TunedConstant[] = [
  'rrfConstant',
  'speakerBoost',
  'neighbourShare',
  'episodeShare',
  'timeBoost',
  'secondHopWeight',
  'listDiversity',
  'listEpisodeFactor',
  'episodeCoverage',
];

/** The experiments `--folds` runs: each constant alone (the others at the library's values), then all together. */
export const foldExperiments: readonly { readonly name: string; readonly varied: readonly TunedConstant[] }[] =
  Object.freeze([
    { name: 'library defaults (nothing chosen)', varied: [] },
    { name: 'RRF constant', varied: ['rrfConstant'] },
    { name: 'speaker boost', varied: ['speakerBoost'] },
    { name: 'neighbour share', varied: ['neighbourShare'] },
    { name: 'episode share (session units)', varied: ['episodeShare'] },
    { name: 'time-aware queries (period boost)', varied: ['timeBoost'] },
    { name: 'second hop (words of the first hits)', varied: ['secondHopWeight'] },
    { name: 'list questions spread over sessions', varied: ['listDiversity', 'listEpisodeFactor'] },
    { name: 'episode coverage (session as one unit)', varied: ['episodeCoverage'] },
    { name: 'length prior (content words)', varied: ['lengthPrior'] },
    { name: "list questions: the named speaker's own turns", varied: ['listSpeakerBoost'] },
    { name: 'length prior and list speaker', varied: ['lengthPrior', 'listSpeakerBoost'] },
    {
      name: 'earlier constants together (no new method)',
      varied: ['rrfConstant', 'speakerBoost', 'neighbourShare', 'episodeShare', 'timeBoost'],
    },
    { name: 'all together without length prior and list speaker', varied: withoutLengthAndListSpeaker },
    { name: 'all together', varied: [...withoutLengthAndListSpeaker, 'lengthPrior', 'listSpeakerBoost'] },
  ]);

/**
 * K-fold cross-validation by conversation: conversation i (in file order) is in fold i mod K; for each
 * fold, the tuning with the best mean frac@10 over the other folds' questions (among those that vary only
 * `varied`) is scored on the fold's own questions. Throws `invalid_input` when K is not 2…conversations.
 */
export function crossValidate(
  questions: readonly TunedQuestion[],
  grid: readonly RecallTuning[],
  folds: number,
  experiment: { name: string; varied: readonly TunedConstant[] },
): CrossValidation {
  const samples = [...new Set(questions.map((question) => question.sampleId))];
  if (!Number.isInteger(folds) || folds < 2 || folds > samples.length) {
    throw new MemoryError(
      'invalid_input',
      `--folds must be an integer from 2 to the number of conversations (${samples.length})`,
      {
        details: { field: 'folds' },
      },
    );
  }
  const foldOf = new Map(samples.map((sampleId, index) => [sampleId, index % folds]));
  const defaultIndex = grid.findIndex((tuning) => sameTuning(tuning, recallTuning));
  const allowed = grid.flatMap((tuning, index) =>
    (Object.keys(recallGridValues) as TunedConstant[]).every(
      (field) => experiment.varied.includes(field) || tuning[field] === recallTuning[field],
    )
      ? [index]
      : [],
  );
  const assigned = new Map<string, number>();
  const choose = (training: readonly TunedQuestion[]) => {
    let best = defaultIndex;
    let bestScore = meanOf(training, (question) => question.byTuning[defaultIndex]!);
    for (const index of allowed) {
      const score = meanOf(training, (question) => question.byTuning[index]!);
      if (score > bestScore + 1e-9) [best, bestScore] = [index, score];
    }
    return { best, bestScore };
  };
  const results = Array.from({ length: folds }, (_, fold): FoldResult => {
    const training = questions.filter((question) => foldOf.get(question.sampleId) !== fold);
    const heldOut = questions.filter((question) => foldOf.get(question.sampleId) === fold);
    const { best, bestScore } = choose(training);
    for (const question of heldOut) assigned.set(question.key, best);
    const held = percent(meanOf(heldOut, (question) => question.byTuning[best]!));
    const bm25 = percent(meanOf(heldOut, (question) => question.bm25));
    return {
      fold,
      conversations: samples.filter((sampleId) => foldOf.get(sampleId) === fold),
      n: heldOut.length,
      chosen: differences(grid[best]!),
      training: percent(bestScore),
      heldOut: held,
      defaults: percent(meanOf(heldOut, (question) => question.byTuning[defaultIndex]!)),
      bm25,
      gainOverBm25: round(held - bm25, 1),
    };
  });
  const mean = (pick: (fold: FoldResult) => number) =>
    round(results.reduce((sum, fold) => sum + pick(fold), 0) / results.length, 1);
  const worstFold = results.reduce((worst, fold) => (fold.heldOut < worst.heldOut ? fold : worst));
  const byCategory = Object.fromEntries(
    [
      ...locomoCategories.map((category) => [String(category), [category]] as const),
      ['overall', locomoCategories] as const,
    ].map(([name, categories]) => {
      const chosen = questions.filter((question) => (categories as readonly number[]).includes(question.category));
      return [
        name,
        {
          n: chosen.length,
          heldOut: percent(meanOf(chosen, (question) => question.byTuning[assigned.get(question.key)!]!)),
          bm25: percent(meanOf(chosen, (question) => question.bm25)),
        },
      ];
    }),
  );
  return {
    experiment: experiment.name,
    varied: experiment.varied,
    folds: results,
    chosenOnAll: (() => {
      const { best, bestScore } = choose(questions);
      return { chosen: differences(grid[best]!), score: percent(bestScore) };
    })(),
    mean: {
      heldOut: mean((fold) => fold.heldOut),
      defaults: mean((fold) => fold.defaults),
      bm25: mean((fold) => fold.bm25),
      gainOverBm25: mean((fold) => fold.gainOverBm25),
    },
    worst: {
      fold: worstFold.fold,
      heldOut: worstFold.heldOut,
      gainOverBm25: Math.min(...results.map((fold) => fold.gainOverBm25)),
    },
    byCategory,
  };
}

function sameTuning(a: RecallTuning, b: RecallTuning): boolean {
  return (Object.keys(b) as (keyof RecallTuning)[]).every((field) => a[field] === b[field]);
}

function differences(tuning: RecallTuning): Partial<Record<TunedConstant, number>> {
  return Object.fromEntries(
    (Object.keys(recallGridValues) as TunedConstant[])
      .filter((field) => tuning[field] !== recallTuning[field])
      .map((field) => [field, tuning[field]]),
  );
}

function meanOf<T>(items: readonly T[], pick: (item: T) => number): number {
  return items.length === 0 ? 0 : items.reduce((sum, item) => sum + pick(item), 0) / items.length;
}

function percent(value: number): number {
  return round(value * 100, 1);
}

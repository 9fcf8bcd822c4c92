import {
  compactionSettingsForBudget,
  createGptTokenCounter,
  createMemory,
  type ContextPolicy,
  type Embedder,
  type Memory,
  type Store,
} from '@mnemo/core';
import {
  buildContext,
  builtInContextDefaults,
  collectRecallCandidates,
  type ContextRequest,
} from '@mnemo/core/internals';
import { createSqliteStore } from '@mnemo/sqlite';
import { createBm25Ranker } from './bm25-baseline.js';
import { CategoryMeans, round } from './category-means.js';
import {
  crossValidate,
  foldCutoff,
  foldExperiments,
  recallGridValues,
  recallTuningGrid,
  scoreTunings,
  type CrossValidation,
  type TunedQuestion,
} from './cross-validate-recall.js';
import { ingestLocomoSample, type IngestedSample } from './locomo-ingest.js';
import {
  answerWordsPresent,
  contextWordSet,
  evidenceFractionAt,
  evidencePresent,
  turnsPresent,
} from './locomo-score.js';
import { locomoCategories, type LocomoQuestion, type LocomoSample } from './parse-locomo-dataset.js';
import { answerableCategories, scoreLocomoRankings, type RankingScores } from './score-locomo-rankings.js';

/** Policies the benchmark builds contexts with: hybrid (the product), and window, summary, token-window as baselines. */
export const benchPolicies = [
  'hybrid',
  'window',
  'summary',
  'token-window',
] as const satisfies readonly ContextPolicy[];

/** Turn ids each question's ranking holds (the baseline tool scores up to 50). */
export const rankingDepth = 50;

/** Options of {@link runLocomoBench}. */
export interface LocomoBenchOptions {
  readonly samples: readonly LocomoSample[];
  /** Context budgets, in tokens. */
  readonly budgets: readonly number[];
  readonly embedder: Embedder;
  /** A refiner beside `embedder` (decision 0045): every message it refines gets its vectors too, as on an idle server (decision 0047: not a chat whose assistant answers at length). */
  readonly refiner?: Embedder;
  /** Turns the `window` policy keeps; default the engine's (4). */
  readonly windowTurns?: number;
  /** Policies to build contexts with; default {@link benchPolicies}. */
  readonly policies?: readonly (typeof benchPolicies)[number][];
  /** Messages the hybrid policy recalls at most; default the engine's. */
  readonly recallK?: number;
  /** K-fold cross-validation of recall's constants by conversation (see `crossValidate`); off by default. */
  readonly folds?: number;
  /** False: rank turns only, build no contexts (the budgets then only size compaction). Default true. */
  readonly contexts?: boolean;
  /** A fresh store per stored copy of a sample; default SQLite in memory. */
  readonly createStore?: () => Store;
  /** Called as work advances (a unit: one question ranked, or one question's contexts at one budget), with what runs now. */
  readonly onProgress?: (done: number, total: number, label: string) => void;
  readonly signal?: AbortSignal;
}

/** Context metrics of one policy at one budget; percents 0–100, tokens per request. */
export interface ContextScores {
  readonly n: number;
  /** Mean fraction of evidence turns present verbatim (see `turnsPresent`). */
  readonly evidencePresent: number | null;
  /** Questions with every evidence turn present. */
  readonly evidenceAllPresent: number | null;
  /** Mean fraction of the gold answer's content words found in the context (categories 1–4). */
  readonly answerWordsPresent: number | null;
  readonly meanTokens: number | null;
  /** Mean tokens of each kind of part (recent turns, recalled snippets, summary, facts) per request. */
  readonly meanTokensByPart: Readonly<Record<(typeof measuredParts)[number], number | null>>;
  readonly fullHistoryTokens: number | null;
  readonly byCategory: Readonly<Record<string, Record<string, number | null>>>;
}

/** The parts whose mean tokens a context score reports. */
const measuredParts = ['recent', 'recalled', 'summary', 'facts'] as const;

/** Everything {@link runLocomoBench} measured. */
export interface LocomoBenchResult {
  readonly recall: RankingScores;
  /** policy → budget (as a string) → scores. */
  readonly context: Readonly<Record<string, Readonly<Record<string, ContextScores>>>>;
  /** `<sample_id>#<qa_index>` → turn ids, best first ({@link rankingDepth} of them). */
  readonly rankings: ReadonlyMap<string, readonly string[]>;
  /** Milliseconds per `recall()` call at LoCoMo scale (one conversation of 369–689 turns), k = 50. */
  readonly recallLatencyMs: { readonly p50: number; readonly p99: number; readonly count: number };
  readonly dataset: {
    readonly samples: number;
    readonly turns: number;
    readonly questions: number;
    readonly scored: number;
  };
  /** With `folds`: the grid and each experiment's folds. */
  readonly folds?: {
    readonly k: number;
    readonly cutoff: number;
    readonly grid: typeof recallGridValues;
    readonly tunings: number;
    readonly experiments: readonly CrossValidation[];
  };
}

// The context metrics reported per category, in percent.
const percentMetrics = ['evidencePresent', 'evidenceAllPresent', 'answerWordsPresent'] as const;

/**
 * Runs the LoCoMo evaluation: stores each sample once per budget (compaction thresholds scale with the
 * budget, as in `mnemo replay`), ranks its turns for every question with `recall()` (k = 50), and builds
 * each question's context under every policy and budget with the question as the query. Questions without
 * evidence are skipped everywhere (and counted in `recall.skipped`).
 */
export async function runLocomoBench(options: LocomoBenchOptions): Promise<LocomoBenchResult> {
  const { samples, budgets, embedder, refiner } = options;
  const withRefiner = refiner === undefined ? {} : { refiner };
  const policies = options.policies ?? benchPolicies;
  const windowTurns = options.windowTurns ?? builtInContextDefaults.windowTurns;
  const createStore = options.createStore ?? (() => createSqliteStore({ path: ':memory:' }));
  const scored = samples.flatMap((sample) => sample.questions.filter((question) => question.evidence.length > 0));
  const contexts = options.contexts !== false;
  const total = scored.length * ((contexts ? budgets.length : 0) + 1);
  const grid = options.folds === undefined ? [] : recallTuningGrid();
  const tuned: TunedQuestion[] = [];
  let done = 0;
  const step = (label: string, count = 1) => options.onProgress?.((done += count), total, label);
  const rankings = new Map<string, string[]>();
  const latencies: number[] = [];
  const means = new Map<string, CategoryMeans>();
  const meansOf = (policy: string, budget: number) => {
    const key = `${policy}\u0000${budget}`;
    let entry = means.get(key);
    if (entry === undefined) means.set(key, (entry = new CategoryMeans()));
    return entry;
  };
  const counter = createGptTokenCounter();
  for (const sample of samples) {
    const questions = sample.questions.filter((question) => question.evidence.length > 0);
    for (const [position, budget] of (contexts ? budgets : budgets.slice(0, 1)).entries()) {
      const store = createStore();
      const memory = createMemory({
        store,
        tokenCounter: counter,
        embedder,
        ...(refiner === undefined ? {} : { refiner: { embedder: refiner } }),
        // Quality, not latency, is measured here: every query waits for its embedding.
        queryEmbeddingTimeoutMs: false,
        worker: { autoStart: false },
        compaction: { settings: compactionSettingsForBudget(budget) },
      });
      try {
        step(`${sample.sampleId}: storing ${sample.turns.length} turns (budget ${budget})`, 0);
        const ingested = await ingestLocomoSample(sample, {
          memory,
          store,
          embedder,
          ...withRefiner,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        });
        if (position === 0) {
          const bm25 = options.folds === undefined ? undefined : createBm25Ranker(sample);
          for (const question of questions) {
            const started = performance.now();
            rankings.set(question.key, await rankTurns(memory, ingested, question.question));
            latencies.push(performance.now() - started);
            if (options.folds !== undefined)
              tuned.push(await tuneQuestion({ store, embedder, ...withRefiner }, ingested, question, grid, bm25!));
            step(`${sample.sampleId}: ranking turns`);
          }
        }
        if (!contexts) continue;
        for (const question of questions) {
          options.signal?.throwIfAborted();
          for (const policy of policies) {
            const request = {
              policy,
              maxTokens: budget,
              windowTurns,
              query: question.question,
              ...(options.recallK === undefined ? {} : { recallK: options.recallK }),
            };
            meansOf(policy, budget).add(
              question.category,
              await measureContext({ store, counter, embedder, ...withRefiner }, ingested, question, request),
            );
          }
          step(`${sample.sampleId}: contexts at ${budget} tokens`);
        }
      } finally {
        await memory.close();
      }
    }
  }
  const context = !contexts
    ? {}
    : Object.fromEntries(
        policies.map((policy) => [
          policy,
          Object.fromEntries(budgets.map((budget) => [String(budget), summarizeContext(meansOf(policy, budget))])),
        ]),
      );
  return {
    recall: scoreLocomoRankings(samples, rankings),
    context,
    rankings,
    recallLatencyMs: {
      p50: round(percentile(latencies, 0.5), 2),
      p99: round(percentile(latencies, 0.99), 2),
      count: latencies.length,
    },
    dataset: {
      samples: samples.length,
      turns: samples.reduce((sum, sample) => sum + sample.turns.length, 0),
      questions: samples.reduce((sum, sample) => sum + sample.questions.length, 0),
      scored: scored.length,
    },
    ...(options.folds === undefined
      ? {}
      : {
          folds: {
            k: options.folds,
            cutoff: foldCutoff,
            grid: recallGridValues,
            tunings: grid.length,
            experiments: foldExperiments.map((experiment) => crossValidate(tuned, grid, options.folds!, experiment)),
          },
        }),
  };
}

/** One question's frac@10 under every tuning of the grid (one search, ranked many ways) and under BM25. */
async function tuneQuestion(
  dependencies: { store: Store; embedder: Embedder; refiner?: Embedder },
  ingested: IngestedSample,
  question: LocomoQuestion,
  grid: Parameters<typeof scoreTunings>[2],
  bm25: (question: string, depth: number) => string[],
): Promise<TunedQuestion> {
  const seqByDiaId = new Map([...ingested.diaIdBySeq].map(([seq, diaId]) => [diaId, seq]));
  const evidence = new Set(question.evidence.map((diaId) => seqByDiaId.get(diaId)!));
  const candidates = await collectRecallCandidates(dependencies, ingested.scope, question.question, {
    candidates: 250,
    secondHop: true,
  });
  return {
    key: question.key,
    sampleId: ingested.scope.userId,
    category: question.category,
    bm25: evidenceFractionAt(bm25(question.question, foldCutoff), question.evidence, foldCutoff),
    byTuning: scoreTunings(candidates, evidence, grid),
  };
}

/** The question's top {@link rankingDepth} turn ids from `recall()`, read back from `metadata.dia_id`. */
async function rankTurns(memory: Memory, ingested: IngestedSample, question: string): Promise<string[]> {
  const hits = await memory.recall(ingested.scope, question, { k: rankingDepth });
  return hits.map((hit) => {
    const stored = hit.message.metadata?.dia_id;
    return typeof stored === 'string' ? stored : String(ingested.diaIdBySeq.get(hit.message.seq));
  });
}

async function measureContext(
  dependencies: {
    store: Store;
    counter: ReturnType<typeof createGptTokenCounter>;
    embedder: Embedder;
    refiner?: Embedder;
  },
  ingested: IngestedSample,
  question: LocomoQuestion,
  request: ContextRequest,
): Promise<Record<string, number | undefined>> {
  // core's buildContext directly: the engine's memory.buildContext does not pass `query` on (it recalls
  // with the newest stored user message instead), which would not measure recall for the question.
  const built = await buildContext(dependencies, ingested.scope, request);
  const present = turnsPresent(built, ingested.scope.conversationId, ingested.turnsBySeq);
  const fraction = evidencePresent(question.evidence, present);
  const answerable =
    question.answer !== undefined && (answerableCategories as readonly number[]).includes(question.category);
  return {
    evidencePresent: fraction,
    evidenceAllPresent: fraction === 1 ? 1 : 0,
    answerWordsPresent: answerable ? answerWordsPresent(question.answer, contextWordSet(built)) : undefined,
    meanTokens: built.report.sentTokens,
    ...Object.fromEntries(
      measuredParts.map((kind) => [
        `${kind}Tokens`,
        built.report.parts.filter((part) => part.kind === kind).reduce((sum, part) => sum + part.tokens, 0),
      ]),
    ),
    fullHistoryTokens: built.report.fullHistoryTokens,
  };
}

function summarizeContext(means: CategoryMeans): ContextScores {
  const percent = (metric: string, categories: readonly (typeof locomoCategories)[number][] = locomoCategories) =>
    nullable(means.mean(metric, categories, 100), 1);
  const tokens = (metric: string) => nullable(means.mean(metric), 0);
  return {
    n: means.count(),
    evidencePresent: percent('evidencePresent'),
    evidenceAllPresent: percent('evidenceAllPresent'),
    answerWordsPresent: percent('answerWordsPresent', answerableCategories),
    meanTokens: tokens('meanTokens'),
    meanTokensByPart: Object.fromEntries(measuredParts.map((kind) => [kind, tokens(`${kind}Tokens`)])) as Record<
      (typeof measuredParts)[number],
      number | null
    >,
    fullHistoryTokens: tokens('fullHistoryTokens'),
    byCategory: Object.fromEntries(
      locomoCategories.map((category) => [
        String(category),
        {
          n: means.count([category]),
          ...Object.fromEntries(
            percentMetrics.map((metric) => [metric, nullable(means.mean(metric, [category], 100), 1)]),
          ),
        },
      ]),
    ),
  };
}

function nullable(value: number | undefined, digits: number): number | null {
  return value === undefined ? null : round(value, digits);
}

function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

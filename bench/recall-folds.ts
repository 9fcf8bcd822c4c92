import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import {
  HashedEmbedder,
  compactionSettingsForBudget,
  createGptTokenCounter,
  createMemory,
  type Embedder,
  type RecallTuning,
} from '@mnemo/core';
import {
  collectRecallCandidates,
  inVectorSpace,
  prepareRecallCandidates,
  rankPreparedCandidates,
  recall,
  recallTuning,
  vectorSpaceOf,
  type PreparedCandidates,
} from '@mnemo/core/internals';
import { StaticEmbedder, UseLiteEmbedder } from '@mnemo/models';
import { createSqliteStore } from '@mnemo/sqlite';
import { createBm25Ranker } from '../packages/cli/dist/bench/bm25-baseline.js';
import { ingestLocomoSample } from '../packages/cli/dist/bench/locomo-ingest.js';
import { evidenceFractionAt } from '../packages/cli/dist/bench/locomo-score.js';
import { parseLocomoDataset, type LocomoSample } from '../packages/cli/dist/bench/parse-locomo-dataset.js';
import { generateAssistantChats } from './generate-assistant-chats.js';

// Recall's role and length constants (decision 0033) cross-validated on LoCoMo and the generated
// user–assistant chats together: each question searched once, its candidates ranked under every tuning
// of the grid; folds by conversation within each dataset, a fold's choice made on the other folds of
// both datasets (the mean of the two datasets' frac@10, so neither dominates by its question count),
// reported per dataset on the held-out fold; the user–assistant held-out part (`ua-h-…`) is scored once
// with the choice made on all tuning data, never tuned on.

const cutoffs = [5, 10, 50] as const;

interface Grid {
  readonly values: Partial<Record<keyof RecallTuning, readonly number[]>>;
  /** Each experiment lets the named constants vary (the others stay at the defaults); the last is "everything". */
  readonly experiments: readonly { name: string; varied: readonly (keyof RecallTuning)[] }[];
}

/** `--grid roles` (the default): the role and length constants of decision 0033, decay and importance (0035). */
const rolesGrid: Grid = {
  values: {
    lengthPriorCap: [32, 16, 10],
    echoDiscount: [0, 0.5, 1],
    exchangeShare: [0, 0.5, 1],
    assistantPrior: [0, 0.3],
    // The role constants only where replies are at least twice as long as the user's turns (a value set a
    // priori: LoCoMo's sides are 0.8–1.14 of each other, the generated chats' replies ~22 times the user's).
    assistantChatRatio: [0, 2],
    // Decay and importance (issue 26, decision 0035): a half-life in days, and a boost for a message that
    // stated a current fact. No fold chose a half-life (30 or 180 days) in decision 0035's run: no longer swept.
    recencyHalfLifeDays: [0],
    importanceBoost: [0, 0.25, 0.5],
    // With a refiner: its space always (100), or only where replies are shorter than 2 or 3 times the
    // user's turns, the embedder's space elsewhere (a chat kind's own model). Without one it changes nothing.
    refinerChatRatio: [100, 2, 3],
  },
  experiments: [
    { name: 'length prior cap', varied: ['lengthPriorCap'] },
    { name: 'echo discount', varied: ['echoDiscount'] },
    { name: 'exchange share', varied: ['exchangeShare'] },
    { name: 'assistant prior', varied: ['assistantPrior'] },
    { name: 'echo discount and exchange share', varied: ['echoDiscount', 'exchangeShare'] },
    { name: 'all together', varied: ['lengthPriorCap', 'echoDiscount', 'exchangeShare', 'assistantPrior'] },
    {
      name: 'role constants where replies are long',
      varied: ['lengthPriorCap', 'echoDiscount', 'assistantPrior', 'assistantChatRatio'],
    },
    { name: 'recency half-life', varied: ['recencyHalfLifeDays'] },
    { name: 'importance', varied: ['importanceBoost'] },
    { name: 'recency half-life and importance', varied: ['recencyHalfLifeDays', 'importanceBoost'] },
    { name: "refiner's space where replies are short", varied: ['refinerChatRatio'] },
    {
      name: 'everything',
      varied: [
        'lengthPriorCap',
        'echoDiscount',
        'exchangeShare',
        'assistantPrior',
        'assistantChatRatio',
        'recencyHalfLifeDays',
        'importanceBoost',
        'refinerChatRatio',
      ],
    },
  ],
};

/**
 * `--grid ranking`: the fusion and share constants, chosen on LoCoMo alone with USE-lite vectors (the
 * README's run 6) and never swept with the static table that is the default now, nor on the chats.
 */
const rankingGrid: Grid = {
  values: {
    rrfConstant: [3, 5, 8],
    secondHopWeight: [0.15, 0.3, 0.5],
    neighbourShare: [0.2, 0.3, 0.4],
    episodeShare: [0.05, 0.1, 0.2],
    episodeCoverage: [1, 2, 3],
    lengthPrior: [0.2, 0.3, 0.4],
  },
  experiments: [
    { name: 'RRF constant', varied: ['rrfConstant'] },
    { name: 'second-hop weight', varied: ['secondHopWeight'] },
    { name: 'neighbour share', varied: ['neighbourShare'] },
    { name: 'episode share', varied: ['episodeShare'] },
    { name: 'episode coverage', varied: ['episodeCoverage'] },
    { name: 'length prior', varied: ['lengthPrior'] },
    { name: 'the fusion (RRF constant and second hop)', varied: ['rrfConstant', 'secondHopWeight'] },
    {
      name: 'the shares (neighbour, episode, coverage)',
      varied: ['neighbourShare', 'episodeShare', 'episodeCoverage'],
    },
    {
      name: 'everything',
      varied: ['rrfConstant', 'secondHopWeight', 'neighbourShare', 'episodeShare', 'episodeCoverage', 'lengthPrior'],
    },
  ],
};

interface Scored {
  readonly dataset: 'locomo' | 'ua-tuning' | 'ua-held-out';
  readonly sampleId: string;
  readonly label: string;
  /** frac@k per cutoff, per tuning (tuning-major). */
  readonly byTuning: Float32Array;
  readonly bm25: readonly number[];
}

const { values } = parseArgs({
  options: {
    locomo: { type: 'string' },
    embedder: { type: 'string' },
    refiner: { type: 'string' },
    folds: { type: 'string' },
    out: { type: 'string' },
    conversations: { type: 'string' },
    'ua-only': { type: 'boolean' },
    'per-tuning': { type: 'boolean' },
    grid: { type: 'string', default: 'roles' },
  },
});
if (values.grid !== 'roles' && values.grid !== 'ranking')
  throw new Error(`--grid must be roles or ranking (got ${values.grid})`);
const { values: gridValues, experiments } = values.grid === 'ranking' ? rankingGrid : rolesGrid;
if (values.refiner !== undefined && values.refiner !== 'use-lite')
  throw new Error(`--refiner must be use-lite (got ${values.refiner})`);
if (values.refiner !== undefined && values.embedder !== 'static')
  throw new Error('--refiner use-lite refines beside --embedder static only, as in serve');
const refiner = values.refiner === undefined ? undefined : new UseLiteEmbedder();
const withRefiner = refiner === undefined ? {} : { refiner };
const folds = Number(values.folds ?? 5);
const embedder: Embedder =
  values.embedder === 'use-lite'
    ? new UseLiteEmbedder()
    : values.embedder === 'static'
      ? new StaticEmbedder()
      : new HashedEmbedder({ dimensions: 512 });
const locomoPath = values.locomo ?? new URL('../../shared/data/locomo/locomo10.json', import.meta.url).pathname;
const limit = values.conversations === undefined ? Infinity : Number(values.conversations);

const grid = expand(recallTuning, gridValues);
const defaultIndex = grid.findIndex((tuning) =>
  (Object.keys(recallTuning) as (keyof RecallTuning)[]).every((field) => tuning[field] === recallTuning[field]),
);
const uaText = JSON.stringify(generateAssistantChats());
const datasets: { name: Scored['dataset']; samples: LocomoSample[]; abilities: Map<string, string> }[] = [];
{
  const locomo =
    values['ua-only'] === true
      ? []
      : parseLocomoDataset(readFileSync(locomoPath, 'utf8'), basename(locomoPath)).slice(0, limit);
  datasets.push({ name: 'locomo', samples: locomo, abilities: new Map() });
  const ua = parseLocomoDataset(uaText, 'assistant-chats.json');
  const raw = JSON.parse(uaText) as { sample_id: string; qa: { ability: string }[] }[];
  const abilities = new Map(
    raw.flatMap((sample) => sample.qa.map((item, index) => [`${sample.sample_id}#${index}`, item.ability] as const)),
  );
  datasets.push({ name: 'ua-tuning', samples: ua.filter((sample) => sample.sampleId.startsWith('ua-t-')), abilities });
  datasets.push({
    name: 'ua-held-out',
    samples: ua.filter((sample) => sample.sampleId.startsWith('ua-h-')),
    abilities,
  });
}
const categoryNames: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};
const scored: Scored[] = [];
// With a refiner, per dataset: recall as a server runs it (under the defaults, deciding the vector space
// before the refiner's search) against the defaults' ranking of the collected candidates, and each one's time.
const served = new Map<
  string,
  { questions: number; sameTop10: number; refinerSkipped: number; collectMs: number; recallMs: number }
>();
let refinerCalls = 0;
const countingRefiner: Embedder | undefined =
  refiner === undefined
    ? undefined
    : {
        model: refiner.model,
        dimensions: refiner.dimensions,
        embed: (texts, options) => {
          refinerCalls += 1;
          return refiner.embed(texts, options);
        },
      };
const started = performance.now();
for (const dataset of datasets) {
  for (const sample of dataset.samples) {
    const store = createSqliteStore({ path: ':memory:' });
    const memory = createMemory({
      store,
      tokenCounter: createGptTokenCounter(),
      embedder,
      ...(refiner === undefined ? {} : { refiner: { embedder: refiner } }),
      queryEmbeddingTimeoutMs: false,
      worker: { autoStart: false },
      compaction: { settings: compactionSettingsForBudget(2000) },
    });
    const ingested = await ingestLocomoSample(sample, { memory, store, embedder, ...withRefiner });
    const seqByDiaId = new Map([...ingested.diaIdBySeq].map(([seq, diaId]) => [diaId, seq]));
    const bm25 = createBm25Ranker(sample);
    for (const question of sample.questions.filter((item) => item.evidence.length > 0)) {
      const collecting = performance.now();
      const candidates = await collectRecallCandidates(
        { store, embedder, ...withRefiner },
        ingested.scope,
        question.question,
        {
          candidates: 250,
          secondHop: true,
          importance: true,
        },
      );
      const collectMs = performance.now() - collecting;
      if (refiner !== undefined) {
        const callsBefore = refinerCalls;
        const recalling = performance.now();
        const hits = await recall({ store, embedder, refiner: countingRefiner }, ingested.scope, question.question, {
          k: 10,
          candidates: 250,
        });
        const recallMs = performance.now() - recalling;
        const prepared = prepareRecallCandidates(inVectorSpace(candidates, vectorSpaceOf(candidates, recallTuning)));
        const ranked = rankPreparedCandidates(prepared, recallTuning, 10).order.map((at) => prepared.hits[at]!);
        const key = (hit: { conversationId: string; message: { seq: number } }) =>
          `${hit.conversationId}:${hit.message.seq}`;
        const row = served.get(dataset.name) ?? {
          questions: 0,
          sameTop10: 0,
          refinerSkipped: 0,
          collectMs: 0,
          recallMs: 0,
        };
        row.questions += 1;
        if (hits.map(key).join() === ranked.slice(0, 10).map(key).join()) row.sameTop10 += 1;
        if (refinerCalls === callsBefore) row.refinerSkipped += 1;
        row.collectMs += collectMs;
        row.recallMs += recallMs;
        served.set(dataset.name, row);
      }
      // The candidates prepared once per vector space a tuning can choose (`refinerChatRatio`).
      const bySpace = new Map<string, PreparedCandidates>();
      const preparedFor = (tuning: RecallTuning) => {
        const space = vectorSpaceOf(candidates, tuning);
        let prepared = bySpace.get(space);
        if (prepared === undefined)
          bySpace.set(space, (prepared = prepareRecallCandidates(inVectorSpace(candidates, space))));
        return prepared;
      };
      const evidence = new Set(question.evidence.map((diaId) => seqByDiaId.get(diaId)!));
      const byTuning = new Float32Array(grid.length * cutoffs.length);
      grid.forEach((tuning, index) => {
        const prepared = preparedFor(tuning);
        const order = rankPreparedCandidates(prepared, tuning, 50).order;
        cutoffs.forEach((cutoff, at) => {
          byTuning[index * cutoffs.length + at] =
            order.slice(0, cutoff).filter((hit) => evidence.has(prepared.hits[hit]!.message.seq)).length /
            evidence.size;
        });
      });
      const bm25Ranking = bm25(question.question, 50);
      scored.push({
        dataset: dataset.name,
        sampleId: sample.sampleId,
        label: dataset.name === 'locomo' ? categoryNames[question.category]! : dataset.abilities.get(question.key)!,
        byTuning,
        bm25: cutoffs.map((cutoff) => evidenceFractionAt(bm25Ranking, question.evidence, cutoff)),
      });
    }
    await memory.close();
    process.stderr.write(
      `${dataset.name} ${sample.sampleId}: ${scored.length} questions, ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
    );
  }
}

const mean = (items: readonly Scored[], pick: (item: Scored) => number) =>
  items.length === 0 ? 0 : (100 * items.reduce((sum, item) => sum + pick(item), 0)) / items.length;
const at10 = cutoffs.indexOf(10);
const frac = (item: Scored, tuning: number, cutoff = at10) => item.byTuning[tuning * cutoffs.length + cutoff]!;
// The balanced objective: the mean of LoCoMo's and the user–assistant tuning part's frac@10.
const objective = (items: readonly Scored[], tuning: number) => {
  const parts = (['locomo', 'ua-tuning'] as const)
    .map((name) => items.filter((item) => item.dataset === name))
    .filter((part) => part.length > 0);
  return parts.reduce((sum, part) => sum + mean(part, (item) => frac(item, tuning)), 0) / parts.length;
};
const allowedBy = (varied: readonly (keyof RecallTuning)[]) =>
  grid.flatMap((tuning, index) =>
    (Object.keys(gridValues) as (keyof RecallTuning)[]).every(
      (field) => varied.includes(field) || tuning[field] === recallTuning[field],
    )
      ? [index]
      : [],
  );
let allowed = allowedBy(experiments[experiments.length - 1]!.varied);
const choose = (items: readonly Scored[]) => {
  let best = defaultIndex;
  for (const index of allowed) if (objective(items, index) > objective(items, best) + 1e-9) best = index;
  return best;
};
const tuningData = scored.filter((item) => item.dataset !== 'ua-held-out');
const foldOf = new Map<string, number>();
for (const name of ['locomo', 'ua-tuning'] as const)
  [...new Set(scored.filter((item) => item.dataset === name).map((item) => item.sampleId))].forEach((id, index) =>
    foldOf.set(id, index % folds),
  );
// Each experiment: its folds' held-out means per dataset (fold means), and what it chooses on all tuning data.
const experimentRows = experiments.map((experiment) => {
  allowed = allowedBy(experiment.varied);
  const sums = { locomo: 0, ua: 0 };
  const chosen: string[] = [];
  for (let fold = 0; fold < folds; fold += 1) {
    const best = choose(tuningData.filter((item) => foldOf.get(item.sampleId) !== fold));
    const held = tuningData.filter((item) => foldOf.get(item.sampleId) === fold);
    sums.locomo +=
      mean(
        held.filter((item) => item.dataset === 'locomo'),
        (item) => frac(item, best),
      ) / folds;
    sums.ua +=
      mean(
        held.filter((item) => item.dataset === 'ua-tuning'),
        (item) => frac(item, best),
      ) / folds;
    chosen.push(describe(grid[best]!));
  }
  const onAllData = choose(tuningData);
  const heldOutPart = scored.filter((item) => item.dataset === 'ua-held-out');
  return `| ${experiment.name} | ${sums.locomo.toFixed(1)} | ${sums.ua.toFixed(1)} | ${describeFolds(chosen)} | ${describe(grid[onAllData]!)} | ${mean(heldOutPart, (item) => frac(item, onAllData)).toFixed(1)} |`;
});
allowed = allowedBy(experiments[experiments.length - 1]!.varied);
const assigned = new Map<Scored, number>();
const foldRows = Array.from({ length: folds }, (_, fold) => {
  const training = tuningData.filter((item) => foldOf.get(item.sampleId) !== fold);
  const held = tuningData.filter((item) => foldOf.get(item.sampleId) === fold);
  const best = choose(training);
  for (const item of held) assigned.set(item, best);
  const part = (name: string) => held.filter((item) => item.dataset === name);
  return {
    fold: fold + 1,
    chosen: describe(grid[best]!),
    locomo: {
      heldOut: mean(part('locomo'), (item) => frac(item, best)),
      defaults: mean(part('locomo'), (item) => frac(item, defaultIndex)),
      bm25: mean(part('locomo'), (item) => item.bm25[at10]!),
    },
    ua: {
      heldOut: mean(part('ua-tuning'), (item) => frac(item, best)),
      defaults: mean(part('ua-tuning'), (item) => frac(item, defaultIndex)),
      bm25: mean(part('ua-tuning'), (item) => item.bm25[at10]!),
    },
  };
});
const onAll = choose(tuningData);
for (const item of scored) if (item.dataset === 'ua-held-out') assigned.set(item, onAll);

// Per dataset and per category / ability: BM25, today's defaults, the cross-validated choice, at 5 / 10 / 50.
const rows: string[][] = [];
for (const name of ['locomo', 'ua-tuning', 'ua-held-out'] as const) {
  const items = scored.filter((item) => item.dataset === name);
  const labels = ['overall', ...[...new Set(items.map((item) => item.label))].sort()];
  for (const label of labels) {
    const chosen = label === 'overall' ? items : items.filter((item) => item.label === label);
    const cells = (pick: (item: Scored, cutoff: number) => number) =>
      cutoffs.map((_, cutoff) => mean(chosen, (item) => pick(item, cutoff)).toFixed(1));
    rows.push([
      name,
      label,
      String(chosen.length),
      ...cells((item, cutoff) => item.bm25[cutoff]!),
      ...cells((item, cutoff) => frac(item, defaultIndex, cutoff)),
      ...cells((item, cutoff) => frac(item, assigned.get(item)!, cutoff)),
    ]);
  }
}
const header = [
  'dataset',
  'category / ability',
  'n',
  'BM25 @5',
  '@10',
  '@50',
  'defaults @5',
  '@10',
  '@50',
  'cross-validated @5',
  '@10',
  '@50',
];
const lines = [
  `embedder ${embedder.model}${refiner === undefined ? '' : `, refiner ${refiner.model}`}; ${grid.length} tunings; ${folds} folds per dataset; ${((performance.now() - started) / 1000).toFixed(0)} s`,
  `chosen on all tuning data: ${describe(grid[onAll]!)} (objective ${objective(tuningData, onAll).toFixed(1)}; defaults ${objective(tuningData, defaultIndex).toFixed(1)})`,
  '',
  '| experiment | LoCoMo held-out folds @10 | UA held-out folds @10 | chosen per fold | chosen on all tuning data | UA held-out part @10 |',
  '|---|---:|---:|---|---|---:|',
  `| defaults (nothing chosen) | ${avg(
    Array.from({ length: folds }, (_, fold) =>
      mean(
        tuningData.filter((item) => item.dataset === 'locomo' && foldOf.get(item.sampleId) === fold),
        (item) => frac(item, defaultIndex),
      ),
    ),
  )} | ${avg(
    Array.from({ length: folds }, (_, fold) =>
      mean(
        tuningData.filter((item) => item.dataset === 'ua-tuning' && foldOf.get(item.sampleId) === fold),
        (item) => frac(item, defaultIndex),
      ),
    ),
  )} | | | ${mean(
    scored.filter((item) => item.dataset === 'ua-held-out'),
    (item) => frac(item, defaultIndex),
  ).toFixed(1)} |`,
  ...experimentRows,
  '',
  '| fold | chosen | LoCoMo held-out | defaults | BM25 | UA held-out | defaults | BM25 |',
  '|---|---|---:|---:|---:|---:|---:|---:|',
  ...foldRows.map(
    (row) =>
      `| ${row.fold} | ${row.chosen} | ${row.locomo.heldOut.toFixed(1)} | ${row.locomo.defaults.toFixed(1)} | ${row.locomo.bm25.toFixed(1)} | ${row.ua.heldOut.toFixed(1)} | ${row.ua.defaults.toFixed(1)} | ${row.ua.bm25.toFixed(1)} |`,
  ),
  `| mean | | ${avg(foldRows.map((row) => row.locomo.heldOut))} | ${avg(foldRows.map((row) => row.locomo.defaults))} | ${avg(foldRows.map((row) => row.locomo.bm25))} | ${avg(foldRows.map((row) => row.ua.heldOut))} | ${avg(foldRows.map((row) => row.ua.defaults))} | ${avg(foldRows.map((row) => row.ua.bm25))} |`,
  '',
  `| ${header.join(' | ')} |`,
  `|${header.map((_, at) => (at < 2 ? '---' : '---:')).join('|')}|`,
  ...rows.map((row) => `| ${row.join(' | ')} |`),
  ...(served.size === 0
    ? []
    : [
        '',
        "recall as served (the defaults, the refiner's search skipped where its space would not rank) against the defaults' ranking of both lists collected",
        '',
        "| dataset | questions | same top 10 | refiner's search skipped | collect both, mean ms | recall, mean ms |",
        '|---|---:|---:|---:|---:|---:|',
        ...[...served].map(
          ([name, row]) =>
            `| ${name} | ${row.questions} | ${((100 * row.sameTop10) / row.questions).toFixed(1)} % | ${((100 * row.refinerSkipped) / row.questions).toFixed(1)} % | ${(row.collectMs / row.questions).toFixed(1)} | ${(row.recallMs / row.questions).toFixed(1)} |`,
        ),
      ]),
];
// Every tuning of the grid on each dataset as a whole (frac@5 / @10): how far each constant moves, chosen or not.
const tuningRows = grid.map((tuning, index) => [
  describe(tuning),
  ...(['locomo', 'ua-tuning', 'ua-held-out'] as const).flatMap((name) => {
    const items = scored.filter((item) => item.dataset === name);
    return [
      mean(items, (item) => frac(item, index, 0)).toFixed(1),
      mean(items, (item) => frac(item, index)).toFixed(1),
    ];
  }),
]);
if (values['per-tuning'] === true)
  lines.push(
    '',
    '| tuning | LoCoMo @5 | @10 | UA tuning part @5 | @10 | UA held-out part @5 | @10 |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...tuningRows.map((row) => `| ${row.join(' | ')} |`),
  );
process.stdout.write(`${lines.join('\n')}\n`);
if (values.out !== undefined)
  writeFileSync(
    values.out,
    JSON.stringify(
      {
        embedder: embedder.model,
        refiner: refiner?.model,
        grid: gridValues,
        folds: foldRows,
        chosenOnAll: describe(grid[onAll]!),
        rows,
        tunings: tuningRows,
        served: Object.fromEntries(served),
      },
      null,
      1,
    ),
  );

function expand(base: RecallTuning, sweep: Partial<Record<keyof RecallTuning, readonly number[]>>): RecallTuning[] {
  let tunings: RecallTuning[] = [base];
  for (const [field, options] of Object.entries(sweep) as [keyof RecallTuning, readonly number[]][]) {
    const withDefault = [...new Set([base[field], ...options])];
    tunings = tunings.flatMap((tuning) => withDefault.map((value) => ({ ...tuning, [field]: value })));
  }
  return tunings;
}

function describe(tuning: RecallTuning): string {
  const changed = (Object.keys(recallTuning) as (keyof RecallTuning)[]).filter(
    (field) => tuning[field] !== recallTuning[field],
  );
  return changed.length === 0 ? 'defaults' : changed.map((field) => `${field} ${tuning[field]}`).join(', ');
}

function describeFolds(chosen: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const choice of chosen) counts.set(choice, (counts.get(choice) ?? 0) + 1);
  return [...counts].map(([choice, count]) => `${choice} ×${count}`).join('; ');
}

function avg(items: readonly number[]): string {
  return (items.reduce((sum, item) => sum + item, 0) / items.length).toFixed(1);
}

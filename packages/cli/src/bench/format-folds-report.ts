import { formatTable, type TableColumn } from '../output/format-table.js';
import type { CrossValidation } from './cross-validate-recall.js';
import { locomoBaselineFractions } from './locomo-baselines.js';
import { locomoCategoryNames, type LocomoCategory } from './parse-locomo-dataset.js';
import type { LocomoBenchResult } from './run-locomo-bench.js';

const right = 'right' as const;
const comparisonOrder: readonly LocomoCategory[] = [4, 1, 2, 3, 5];

/** The cross-validation tables of `mnemo bench locomo --folds K`: one row per experiment, the folds of the last, per category. */
export function formatFoldsReport(folds: NonNullable<LocomoBenchResult['folds']>): string {
  const experiments = folds.experiments;
  const last = experiments[experiments.length - 1]!;
  return [
    `Cross-validation of recall's constants, ${folds.k} folds by conversation (${folds.tunings} tunings; frac@${folds.cutoff}, %, overall = categories 1-5):`,
    'each constant chosen on the training folds only, scored on the held-out fold',
    formatTable(
      [
        { header: 'experiment' },
        ...['held-out mean', 'worst fold', 'defaults', 'BM25', 'gain', 'worst gain'].map((header) => ({
          header,
          align: right,
        })),
        { header: 'chosen per fold' },
        { header: 'chosen on all' },
      ],
      experiments.map((experiment) => [
        experiment.experiment,
        experiment.mean.heldOut.toFixed(1),
        experiment.worst.heldOut.toFixed(1),
        experiment.mean.defaults.toFixed(1),
        experiment.mean.bm25.toFixed(1),
        experiment.mean.gainOverBm25.toFixed(1),
        experiment.worst.gainOverBm25.toFixed(1),
        experiment.folds.map((fold) => describeChoice(fold.chosen)).join(' | '),
        `${describeChoice(experiment.chosenOnAll.chosen)} (${experiment.chosenOnAll.score.toFixed(1)})`,
      ]),
    ),
    `Folds of "${last.experiment}"`,
    formatTable(
      [
        { header: 'fold' },
        { header: 'conversations' },
        ...['n', 'training', 'held-out', 'defaults', 'BM25', 'gain'].map((header) => ({ header, align: right })),
        { header: 'chosen' },
      ],
      last.folds.map((fold) => [
        String(fold.fold + 1),
        fold.conversations.join(', '),
        String(fold.n),
        fold.training.toFixed(1),
        fold.heldOut.toFixed(1),
        fold.defaults.toFixed(1),
        fold.bm25.toFixed(1),
        fold.gainOverBm25.toFixed(1),
        describeChoice(fold.chosen),
      ]),
    ),
    `Per category, each question scored with its held-out fold's choice ("${last.experiment}"), frac@${folds.cutoff}, beside BM25 (this run) and DRAGON (LoCoMo paper)`,
    formatCategories(last),
  ].join('\n');
}

function formatCategories(experiment: CrossValidation): string {
  const columns: TableColumn[] = [
    { header: 'retriever' },
    ...comparisonOrder.map((category) => ({ header: `${locomoCategoryNames[category]} (${category})`, align: right })),
    { header: 'overall', align: right },
  ];
  const dragon = locomoBaselineFractions.DRAGON[10]!;
  const cell = (name: string, pick: 'heldOut' | 'bm25') =>
    experiment.byCategory[name]!.n === 0 ? '-' : experiment.byCategory[name]![pick].toFixed(1);
  return formatTable(columns, [
    [
      'mnemo (cross-validated)',
      ...comparisonOrder.map((category) => cell(String(category), 'heldOut')),
      cell('overall', 'heldOut'),
    ],
    ['BM25 (this run)', ...comparisonOrder.map((category) => cell(String(category), 'bm25')), cell('overall', 'bm25')],
    [
      'DRAGON (paper)',
      ...comparisonOrder.map((category) => dragon[String(category)]!.toFixed(1)),
      dragon.overall!.toFixed(1),
    ],
  ]);
}

function describeChoice(chosen: Readonly<Record<string, number>>): string {
  const entries = Object.entries(chosen);
  return entries.length === 0
    ? 'defaults'
    : entries.map(([field, value]) => `${shortNames[field] ?? field} ${value}`).join(', ');
}

const shortNames: Readonly<Record<string, string>> = {
  rrfConstant: 'c',
  speakerBoost: 'speaker',
  neighbourShare: 'neighbour',
  episodeShare: 'episode',
  episodeDiversity: 'mmr',
  timeBoost: 'time',
  secondHopWeight: 'second hop',
  listDiversity: 'list mmr',
  listEpisodeFactor: 'list episode ×',
  episodeCoverage: 'coverage',
  lengthPrior: 'length',
  listSpeakerBoost: 'list speaker',
};

import { formatCount, formatTable, type TableColumn } from '../output/format-table.js';
import { formatFoldsReport } from './format-folds-report.js';
import { locomoBaselineFractions, locomoBm25Answerable } from './locomo-baselines.js';
import { locomoCategories, locomoCategoryNames, type LocomoCategory } from './parse-locomo-dataset.js';
import type { LocomoBenchResult } from './run-locomo-bench.js';
import type { RankingSummary } from './score-locomo-rankings.js';

/** What a report says about the run besides the scores. */
export interface LocomoRunInfo {
  readonly dataFile: string;
  readonly embedder: string;
  /** The refiner beside the embedder (decision 0045), when one ran. */
  readonly refiner?: string;
  readonly encoding: string;
  readonly durationMs: number;
  /** Wall-clock milliseconds the embedding model ran (storing and querying). */
  readonly embedMs: number;
}

const right = 'right' as const;
// The order of BASELINES.md's comparison table: semantic order, not the file's numbering.
const comparisonOrder: readonly LocomoCategory[] = [4, 1, 2, 3, 5];

/** The JSON of `mnemo bench locomo --json`: the contract fields (`recall`, `context`) first, extras after. */
export function toLocomoJson(result: LocomoBenchResult, info: LocomoRunInfo): Record<string, unknown> {
  return {
    recall: {
      overall: result.recall.overall,
      byCategory: result.recall.byCategory,
      cat1to4: result.recall.cat1to4,
      skipped: result.recall.skipped,
    },
    context: result.context,
    dataset: result.dataset,
    recallLatencyMs: result.recallLatencyMs,
    embedder: info.embedder,
    ...(info.refiner === undefined ? {} : { refiner: info.refiner }),
    encoding: info.encoding,
    durationMs: Math.round(info.durationMs),
    embedMs: Math.round(info.embedMs),
    ...(result.folds === undefined ? {} : { folds: result.folds }),
  };
}

/** The readable report: recall per category, recall beside BM25 and DRAGON, and the context table. */
export function formatLocomoReport(result: LocomoBenchResult, info: LocomoRunInfo): string {
  const { dataset, recall } = result;
  const skipped = Object.entries(recall.skipped.byCategory)
    .map(([category, count]) => `${count} in category ${category}`)
    .join(', ');
  const heading =
    `LoCoMo (${info.dataFile}): ${formatCount(dataset.samples)} conversations, ${formatCount(dataset.turns)} turns, ` +
    `${formatCount(dataset.questions)} questions, ${formatCount(dataset.scored)} scored` +
    (recall.skipped.noEvidence > 0 ? ` (${recall.skipped.noEvidence} without evidence skipped: ${skipped})` : '') +
    `\nembedder ${info.embedder}${info.refiner === undefined ? '' : `, refiner ${info.refiner}`}, tokenizer ${info.encoding}, ${formatSeconds(info.durationMs)} (model ${formatSeconds(info.embedMs)})\n`;
  return [
    heading,
    'Evidence recall of recall() over turns, k = 50 (% of evidence turns in the top k; all = every evidence turn)',
    formatTable(
      [
        { header: 'category' },
        { header: 'n', align: right },
        ...['frac@5', 'frac@10', 'frac@25', 'frac@50', 'all@10', 'any@10'].map((header) => ({ header, align: right })),
      ],
      [
        ...locomoCategories.map((category) =>
          rankingRow(`${category} ${locomoCategoryNames[category]}`, recall.byCategory[String(category)]!),
        ),
        rankingRow('overall (1-5)', recall.overall),
        rankingRow('overall (1-4)', recall.cat1to4),
      ],
    ),
    'Beside the published figures (frac@k, %; BM25 and DRAGON from BASELINES.md, overall = categories 1-5)',
    formatComparison(result),
    'Categories 1-4 as the baseline tool reports them (n = 1,536 on the full file)',
    formatTable(
      [{ header: 'retriever' }, ...Object.keys(locomoBm25Answerable).map((header) => ({ header, align: right }))],
      [
        ['mnemo recall', ...Object.keys(locomoBm25Answerable).map((metric) => percent(recall.cat1to4[metric]))],
        ['BM25', ...Object.values(locomoBm25Answerable).map((value) => value.toFixed(1))],
      ],
    ),
    `recall() latency at this scale: p50 ${result.recallLatencyMs.p50} ms, p99 ${result.recallLatencyMs.p99} ms over ${formatCount(result.recallLatencyMs.count)} queries\n`,
    ...(Object.keys(result.context).length === 0
      ? []
      : [
          'Contexts built for each question (the question is the query), mean per question',
          formatContextTable(result),
          contextNotes,
        ]),
    ...(result.folds === undefined ? [] : [formatFoldsReport(result.folds)]),
  ].join('\n');
}

function rankingRow(label: string, summary: RankingSummary): string[] {
  return [
    label,
    formatCount(summary.n ?? 0),
    ...['frac@5', 'frac@10', 'frac@25', 'frac@50', 'all@10', 'any@10'].map((metric) => percent(summary[metric])),
  ];
}

function formatComparison(result: LocomoBenchResult): string {
  const columns: TableColumn[] = [
    { header: 'k' },
    { header: 'retriever' },
    ...comparisonOrder.map((category) => ({ header: `${locomoCategoryNames[category]} (${category})`, align: right })),
    { header: 'overall', align: right },
  ];
  const rows: string[][] = [];
  for (const k of [5, 10, 25, 50]) {
    const metric = `frac@${k}`;
    rows.push([
      String(k),
      'mnemo recall',
      ...comparisonOrder.map((category) => percent(result.recall.byCategory[String(category)]?.[metric])),
      percent(result.recall.overall[metric]),
    ]);
    for (const retriever of ['BM25', 'DRAGON'] as const) {
      const figures = locomoBaselineFractions[retriever][k]!;
      rows.push([
        '',
        retriever,
        ...comparisonOrder.map((category) => figures[String(category)]!.toFixed(1)),
        figures.overall!.toFixed(1),
      ]);
    }
  }
  return formatTable(columns, rows);
}

function formatContextTable(result: LocomoBenchResult): string {
  const columns: TableColumn[] = [
    { header: 'policy' },
    { header: 'budget', align: right },
    { header: 'evidence present', align: right },
    { header: 'all evidence', align: right },
    { header: 'answer words', align: right },
    { header: 'mean tokens', align: right },
    { header: 'recent', align: right },
    { header: 'recalled', align: right },
    { header: 'full history', align: right },
  ];
  const rows = Object.entries(result.context).flatMap(([policy, budgets]) =>
    Object.entries(budgets).map(([budget, scores]) => [
      policy,
      formatCount(Number(budget)),
      percent(scores.evidencePresent),
      percent(scores.evidenceAllPresent),
      percent(scores.answerWordsPresent),
      scores.meanTokens === null ? '-' : formatCount(scores.meanTokens),
      scores.meanTokensByPart.recent === null ? '-' : formatCount(scores.meanTokensByPart.recent),
      scores.meanTokensByPart.recalled === null ? '-' : formatCount(scores.meanTokensByPart.recalled),
      scores.fullHistoryTokens === null ? '-' : formatCount(scores.fullHistoryTokens),
    ]),
  );
  return formatTable(columns, rows);
}

const contextNotes =
  "evidence present = mean % of a question's evidence turns that the context holds verbatim: the turn is in the recent part\n" +
  'or is a recalled snippet, and its whole text appears in the context (a snippet or message cut to fit does not count;\n' +
  'a turn only paraphrased in the summary does not count). all evidence = % of questions with every evidence turn present.\n' +
  "answer words = mean % of the gold answer's content words (stopwords dropped, plural s folded) found anywhere in the\n" +
  'context, categories 1-4 only (adversarial items have no gold answer). Tokens are the request as sent (o200k), of it the\n' +
  'recent turns and the recalled snippets, and the same request with every stored message. window keeps the last 4\n' +
  'turns; token-window the newest turns that fit; summary and hybrid use the rolling summary that compaction (offline\n' +
  'extractive summarizer, thresholds scaled to the budget) wrote.\n';

function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : value.toFixed(1);
}

function formatSeconds(ms: number): string {
  return ms >= 60_000
    ? `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`
    : `${(ms / 1000).toFixed(1)} s`;
}

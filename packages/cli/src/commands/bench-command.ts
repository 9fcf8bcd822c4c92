import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HashedEmbedder, MemoryError, createGptTokenCounter, type Embedder } from '@mnemo/core';
import { StaticEmbedder, UseLiteEmbedder } from '@mnemo/models';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { createBenchProgress } from '../bench/bench-progress.js';
import { CachingEmbedder } from '../bench/caching-embedder.js';
import { formatLocomoReport, toLocomoJson } from '../bench/format-locomo-report.js';
import { parseLocomoDataset } from '../bench/parse-locomo-dataset.js';
import { runLocomoBench } from '../bench/run-locomo-bench.js';
import { resolvePath } from '../config/cli-config.js';
import { parsePositiveInteger } from './parse-positive-integer.js';

interface LocomoFlags {
  readonly data?: string;
  readonly maxTokens: readonly number[];
  readonly json?: boolean;
  readonly rankings?: string;
  readonly conversations?: number;
  readonly embedder: BenchEmbedder;
  readonly refiner?: 'use-lite' | 'none';
  readonly lenient?: boolean;
  readonly folds?: number;
  readonly recallOnly?: boolean;
  readonly embeddingCache?: string;
}

/** Embedders `mnemo bench locomo` can run with: USE-lite (the teacher), the static table distilled from it (the default of `serve`), or the hashed bag of words. */
export const benchEmbedders = ['use-lite', 'static', 'hashed'] as const;

/** One of {@link benchEmbedders}. */
export type BenchEmbedder = (typeof benchEmbedders)[number];

/** Budgets the LoCoMo benchmark builds contexts for when `--max-tokens` is not given. */
export const defaultLocomoBudgets: readonly number[] = [1000, 2000, 4000];

// The repository root is four levels above dist/commands/; LoCoMo sits beside the repository, never in it.
const defaultLocomoData = fileURLToPath(
  new URL('../shared/data/locomo/locomo10.json', new URL('../../../../', import.meta.url)),
);

/** Adds `mnemo bench locomo`: evidence recall and context quality on the LoCoMo conversations. */
export function registerBenchCommand(program: Command, io: CliIo): void {
  const bench = program.command('bench').description('evaluations of recall and context building');
  bench
    .command('locomo')
    .description(
      'store each LoCoMo conversation, rank its turns for every question with recall(), and score the contexts each policy builds',
    )
    .option(
      '--data <path>',
      `LoCoMo file (default: ../shared/data/locomo/locomo10.json beside the repository: ${defaultLocomoData})`,
    )
    .option(
      '--max-tokens <list>',
      'comma-separated context budgets (default: 1000,2000,4000)',
      parseBudgets,
      defaultLocomoBudgets,
    )
    .option('--conversations <n>', 'only the first n conversations', parsePositiveInteger)
    .option(
      '--lenient',
      'date a session whose date cannot be read by session order, with a warning, instead of refusing the file',
    )
    .option(
      '--rankings <file>',
      'write each question\'s ranking as {"<sample_id>#<qa_index>": ["D3:4", ...]} (50 turn ids, best first)',
    )
    .addOption(
      new Option('--embedder <name>', "embedding model (default static, as serve's)")
        .choices(benchEmbedders)
        .default('static'),
    )
    .addOption(
      new Option(
        '--refiner <name>',
        "the refiner beside static (decision 0045; default use-lite beside static, as serve's): every message the refiner refines (not a chat whose assistant answers at length, decision 0047) gets its vectors, as on an idle server",
      ).choices(['use-lite', 'none']),
    )
    .option(
      '--folds <k>',
      "K-fold cross-validation of recall's constants by conversation: chosen on K−1 folds, scored on the held-out one",
      parsePositiveInteger,
    )
    .option('--recall-only', 'rank turns (and run --folds) only; build no contexts')
    .option(
      '--embedding-cache <file>',
      "keep the model's vectors in this file between runs (read if present, written at the end)",
    )
    .option(
      '--json',
      'print one JSON object: recall (overall, byCategory, cat1to4) and context (policy → budget → scores), percents 0–100',
    )
    .action(async (_flags: LocomoFlags, command: Command) => {
      await runLocomoCommand(command.opts<LocomoFlags>(), io);
    });
}

async function runLocomoCommand(flags: LocomoFlags, io: CliIo): Promise<void> {
  const started = performance.now();
  const path = flags.data === undefined ? defaultLocomoData : resolvePath(io.cwd, flags.data);
  const all = parseLocomoDataset(await readLocomoFile(path, flags.data === undefined), basename(path), {
    lenient: flags.lenient === true,
  });
  for (const warning of all.flatMap((sample) => sample.warnings)) io.stderr.write(`mnemo bench: warning: ${warning}\n`);
  const samples = flags.conversations === undefined ? all : all.slice(0, flags.conversations);
  const embedder = new CachingEmbedder(createEmbedder(flags.embedder));
  const refinerKind = flags.refiner ?? (flags.embedder === 'static' ? 'use-lite' : 'none');
  if (refinerKind !== 'none' && flags.embedder !== 'static')
    throw new MemoryError('invalid_input', `--refiner runs only beside --embedder static (got ${flags.embedder})`, {
      details: { field: 'refiner' },
    });
  const refiner = refinerKind === 'none' ? undefined : new CachingEmbedder(new UseLiteEmbedder());
  const cachePath = flags.embeddingCache === undefined ? undefined : resolvePath(io.cwd, flags.embeddingCache);
  // The refiner's vectors are kept beside the embedder's, in a file of their own.
  const refinerCachePath = cachePath === undefined ? undefined : `${cachePath}.refiner`;
  if (cachePath !== undefined) await embedder.load(cachePath);
  if (refinerCachePath !== undefined) await refiner?.load(refinerCachePath);
  const progress = createBenchProgress(io.stderr, flags.json !== true);
  let result;
  try {
    result = await runLocomoBench({
      samples,
      budgets: flags.maxTokens,
      embedder,
      ...(refiner === undefined ? {} : { refiner }),
      ...(flags.folds === undefined ? {} : { folds: flags.folds }),
      contexts: flags.recallOnly !== true,
      onProgress: (done, total, label) => progress.update(done, total, label),
    });
  } finally {
    progress.stop();
  }
  if (cachePath !== undefined && embedder.embeddedTexts > 0) await embedder.save(cachePath);
  if (refinerCachePath !== undefined && refiner !== undefined && refiner.embeddedTexts > 0)
    await refiner.save(refinerCachePath);
  if (flags.rankings !== undefined) {
    const file = resolvePath(io.cwd, flags.rankings);
    await writeFile(file, `${JSON.stringify(Object.fromEntries(result.rankings))}\n`);
    if (flags.json !== true) io.stderr.write(`mnemo bench: wrote ${result.rankings.size} rankings to ${file}\n`);
  }
  const info = {
    dataFile: basename(path),
    embedder: embedder.model,
    ...(refiner === undefined ? {} : { refiner: refiner.model }),
    encoding: createGptTokenCounter().encoding,
    durationMs: performance.now() - started,
    embedMs: embedder.embedMs + (refiner?.embedMs ?? 0),
  };
  io.stdout.write(
    flags.json === true ? `${JSON.stringify(toLocomoJson(result, info))}\n` : formatLocomoReport(result, info),
  );
}

/**
 * The LoCoMo file's text. mnemo does not ship LoCoMo (CC BY-NC 4.0, evaluation only), so a fresh clone
 * has none: a missing file is `not_found` naming the path looked at, where the data comes from and the option.
 */
async function readLocomoFile(path: string, isDefault: boolean): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const where = isDefault ? `the default place, ${path} (../shared/data/locomo/ beside the repository)` : path;
    throw new MemoryError(
      'not_found',
      `no LoCoMo data at ${where}. mnemo does not ship LoCoMo (CC BY-NC 4.0, for evaluation only): get locomo10.json from the LoCoMo release (https://github.com/snap-research/locomo, data/locomo10.json) and pass --data <path to locomo10.json>, or put it at ${defaultLocomoData}`,
      { cause: error, details: { field: 'data', path } },
    );
  }
}

function createEmbedder(name: BenchEmbedder): Embedder {
  if (name === 'static') return new StaticEmbedder();
  return name === 'hashed' ? new HashedEmbedder({ dimensions: 512 }) : new UseLiteEmbedder();
}

function parseBudgets(value: string): number[] {
  const budgets = value.split(',').map((part) => part.trim());
  if (budgets.some((budget) => !/^\d+$/.test(budget) || Number(budget) < 1 || Number(budget) > 1_000_000)) {
    throw new InvalidArgumentError('must be comma-separated positive integers, e.g. 1000,2000,4000.');
  }
  return [...new Set(budgets.map(Number))];
}

// Token benchmark: what the mesh-radio bot sends per request under each context policy, against
// resending the whole history, for conversations of 10 to 2,000 messages; the summary policy with the
// library defaults beside the seed's own rolling-summary algorithm and meshai, net of the summarizer's tokens.
// Run: npm run bench:tokens.
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { MessageInput } from '@mnemo/core';
import { generateMeshChat } from '../examples/generate-mesh-chat.js';
import {
  checkAgainstSeedAlgorithm,
  compareWithSeed,
  seedAlgorithmFromMessages,
  seedAlgorithmTotalAt,
} from './compare-with-seed.js';
import { createCompactionVariants } from './compaction-variants.js';
import { compactionDefinitions, formatCompactionTable, formatSeedComparison } from './format-compaction-table.js';
import { formatTokenTable } from './format-token-table.js';
import { loadJsonlConversation } from './load-jsonl-conversation.js';
import { loadLocomoConversation } from './load-locomo-conversation.js';
import { replayCompactionCosts, type CompactionCostSeries } from './replay-compaction-costs.js';
import {
  replayPolicies,
  replayTokenCosts,
  type ReplayPolicy,
  type ReplayResult,
  type ReplaySettings,
} from './replay-token-costs.js';
import { seedSavedPercent } from './seed-savings.js';
import { meanLatencyByPolicy, type DatasetReport, type TokenReport } from './token-report.js';

const defaultSizes = [10, 20, 30, 50, 100, 500, 2000];
const meshSeed = 7;
const systemPrompt =
  'You are a mesh-radio assistant. Answer in at most 150 characters, plain text, metric units, no emoji.';
const defaultLocomoPath = fileURLToPath(new URL('../../shared/data/locomo/locomo10.json', import.meta.url));
const exampleTranscriptPath = fileURLToPath(new URL('../examples/mesh-radio-node-7.jsonl', import.meta.url));
const resultsPath = fileURLToPath(new URL('./results/tokens.json', import.meta.url));

const { values } = parseArgs({
  options: {
    'max-tokens': { type: 'string', default: '1000' },
    'window-turns': { type: 'string', default: '4' },
    sizes: { type: 'string', default: defaultSizes.join(',') },
    json: { type: 'boolean', default: false },
    locomo: { type: 'string', default: defaultLocomoPath },
  },
});
const locomoPath = values.locomo;
const settings: ReplaySettings = {
  maxTokens: positiveInteger('--max-tokens', values['max-tokens']),
  windowTurns: positiveInteger('--window-turns', values['window-turns']),
  system: systemPrompt,
};
const sizes = values.sizes.split(',').map((size) => positiveInteger('--sizes', size));

function positiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`${flag} must be a positive integer (got ${JSON.stringify(text)})`);
    process.exit(2);
  }
  return value;
}

/**
 * Replays the first `size` messages for every size; sizes past the conversation's end collapse into one
 * "all" row. Then the summary policy under every compaction variant, one pass per variant over the same
 * sizes; `withSeed` puts the seed's table beside it (the mesh-radio chats, which the seed measured).
 */
async function measureDataset(
  name: string,
  source: string,
  conversation: readonly MessageInput[],
  notes: string[],
  withSeed: boolean,
): Promise<DatasetReport> {
  const fitting = sizes.filter((size) => size <= conversation.length);
  const cut = sizes.filter((size) => size > conversation.length);
  if (cut.length > 0) {
    fitting.push(conversation.length);
    notes.push(
      `the conversation has ${conversation.length} messages; sizes ${cut.join(', ')} are replayed as all ${conversation.length}`,
    );
  }
  const rows: ReplayResult[] = [];
  for (const size of [...new Set(fitting)]) rows.push(await replayTokenCosts(conversation.slice(0, size), settings));
  const compaction: CompactionCostSeries[] = [];
  for (const variant of createCompactionVariants(settings.maxTokens))
    compaction.push(await replayCompactionCosts(conversation, fitting, settings, variant));
  const seedComparison = withSeed ? compareWithSeed(compaction) : undefined;
  const seedAlgorithmCheck = checkAgainstSeedAlgorithm(compaction);
  return {
    name,
    source,
    notes,
    rows,
    meanLatencyMicroseconds: meanLatencyByPolicy(rows),
    compaction,
    ...(seedComparison === undefined ? {} : { seedComparison }),
    ...(seedAlgorithmCheck === undefined ? {} : { seedAlgorithmCheck }),
  };
}

function skippedDataset(name: string, source: string, reason: string): DatasetReport {
  const zero = Object.fromEntries(replayPolicies.map((policy) => [policy, 0])) as Record<ReplayPolicy, number>;
  return { name, source, notes: [], rows: [], meanLatencyMicroseconds: zero, skipped: reason };
}

// A short untimed replay first, so JIT warm-up and the tokenizer's first load do not land in the first row.
await replayTokenCosts(generateMeshChat({ messages: 60, seed: meshSeed + 1 }), settings);

const datasets: DatasetReport[] = [];
const meshChat = generateMeshChat({ messages: Math.max(...sizes), seed: meshSeed });
datasets.push(
  await measureDataset(
    'mesh-radio',
    `generated by examples/generate-mesh-chat.ts, seed ${meshSeed}`,
    meshChat,
    [],
    true,
  ),
);
const example = await loadJsonlConversation(exampleTranscriptPath);
datasets.push(
  await measureDataset(
    'mesh-radio-node-7',
    'examples/mesh-radio-node-7.jsonl, the hand-written transcript',
    example,
    [],
    true,
  ),
);

const locomo = await loadLocomoConversation(locomoPath);
if (locomo === undefined) {
  datasets.push(
    skippedDataset(
      'locomo',
      locomoPath,
      `${locomoPath} not found; LoCoMo lives outside the repository (../shared/data/locomo)`,
    ),
  );
} else {
  const source = `${locomo.sampleId} of LoCoMo (CC BY-NC 4.0), ${locomo.userName} as user, ${locomo.assistantName} as assistant`;
  datasets.push(await measureDataset('locomo', source, locomo.messages, [], false));
}

const report: TokenReport = {
  benchmark: 'tokens',
  createdAt: new Date().toISOString(),
  settings: {
    maxTokens: settings.maxTokens,
    windowTurns: settings.windowTurns,
    system: settings.system,
    encoding: datasets.find((dataset) => dataset.rows.length > 0)?.rows[0]?.encoding ?? 'unknown',
    budgets: {
      full: 'no budget',
      window: `${settings.windowTurns} turns, ${settings.maxTokens} tokens`,
      'token-window': `${settings.maxTokens} tokens`,
    },
    compactionDefinitions,
    seedSavedPercent,
  },
  datasets,
};
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(resultsPath, `${JSON.stringify(report, null, 2)}\n`);

if (values.json) {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  console.log(`token benchmark · ${report.settings.encoding} · system prompt included in every request\n`);
  for (const dataset of datasets) console.log(`${formatTokenTable(dataset, report.settings)}\n`);
  console.log('tok/req = mean tokens per request, last = tokens of the last request, sent = total over all requests,');
  console.log('saved = sent against resending the full history each request (full-history column).\n');
  for (const dataset of datasets) {
    if (dataset.seedComparison !== undefined)
      console.log(`${formatSeedComparison(dataset.name, dataset.seedComparison)}\n`);
  }
  for (const dataset of datasets) {
    const check = dataset.seedAlgorithmCheck;
    if (check === undefined) continue;
    const over = check.perRequestOver.map((entry) => `${entry.sent} > ${entry.seed} at ${entry.messages}`).join(', ');
    const total =
      check.totalAt === undefined
        ? ''
        : `; Σ sent + summarizer at ${check.totalAt.messages} messages ${check.totalAt.total.toLocaleString('en-US')} vs ${check.totalAt.seed.toLocaleString('en-US')}`;
    console.log(
      `${dataset.name}: ${check.variant} against the seed's algorithm (per request ≤ from ${seedAlgorithmFromMessages} messages on, total ≤ by ${seedAlgorithmTotalAt}): ` +
        `${check.met ? 'MET' : 'NOT MET'}${over === '' ? '' : ` (${over})`}${total}`,
    );
  }
  console.log('');
  for (const dataset of datasets) {
    if (dataset.compaction !== undefined)
      console.log(`${formatCompactionTable(dataset.name, dataset.compaction, settings.maxTokens)}\n`);
  }
  for (const definition of compactionDefinitions) console.log(definition);
  console.log(`\nJSON: ${resultsPath}`);
}

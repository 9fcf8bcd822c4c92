// Recall for one user whose conversations are of both kinds (decision 0049): a chat between two people
// (a LoCoMo conversation) and a person with an assistant that answers at length (a generated user–assistant
// chat, `generate-assistant-chats.ts`), stored once as two users (each conversation alone) and once as two
// conversations of one user, side by side in one run. Each question is recalled across the user's
// conversations (as `memory.recall` does; k 31 by default, as the 2,000-token hybrid context recalls,
// which sets how many candidates each list holds), and scored by its evidence in its own conversation:
// frac@5 and @10 per kind. The embedder is serve's (the static table) with USE-lite refining every conversation it
// refines (not a chat whose assistant answers at length, decision 0047), as on an idle server;
// `--refiner none` leaves it out. Pairs LoCoMo conversation i with chat i of the tuning part.
// Run: npm run bench:mixed-users [-- --pairs 10 --k 31 --refiner use-lite|none --json]
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { compactionSettingsForBudget, createGptTokenCounter, createMemory, type Scope } from '@mnemo/core';
import { recall } from '@mnemo/core/internals';
import { StaticEmbedder, UseLiteEmbedder } from '@mnemo/models';
import { createSqliteStore } from '@mnemo/sqlite';
import { ingestLocomoSample } from '../packages/cli/dist/bench/locomo-ingest.js';
import { evidenceFractionAt } from '../packages/cli/dist/bench/locomo-score.js';
import { parseLocomoDataset, type LocomoSample } from '../packages/cli/dist/bench/parse-locomo-dataset.js';
import { formatCount, formatTable } from '../packages/cli/dist/output/format-table.js';
import { countFlag } from './flags.js';
import { generateAssistantChats } from './generate-assistant-chats.js';

const { values } = parseArgs({
  options: {
    locomo: { type: 'string' },
    pairs: { type: 'string', default: '10' },
    // As the 2,000-token hybrid context recalls (core's defaultRecallK: 2,000 / 64).
    k: { type: 'string', default: '31' },
    refiner: { type: 'string', default: 'use-lite' },
    json: { type: 'boolean', default: false },
  },
});
if (values.refiner !== 'use-lite' && values.refiner !== 'none')
  throw new RangeError(`--refiner must be use-lite or none (got ${values.refiner})`);
const pairs = countFlag('--pairs', values.pairs, 1);
const k = countFlag('--k', values.k, 10);
const locomoPath = values.locomo ?? new URL('../../shared/data/locomo/locomo10.json', import.meta.url).pathname;
const locomo = parseLocomoDataset(readFileSync(locomoPath, 'utf8'), basename(locomoPath));
const chats = parseLocomoDataset(JSON.stringify(generateAssistantChats()), 'assistant-chats.json').filter((sample) =>
  sample.sampleId.startsWith('ua-t-'),
);
if (pairs > Math.min(locomo.length, chats.length))
  throw new RangeError(`--pairs must be at most ${Math.min(locomo.length, chats.length)} (got ${pairs})`);
const embedder = new StaticEmbedder();
const refiner = values.refiner === 'use-lite' ? new UseLiteEmbedder() : undefined;
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);

type Kind = 'two people (LoCoMo)' | 'person and assistant (generated)';
type Layout = 'alone' | 'one user';
const cutoffs = [5, 10] as const;
// Sums of frac@k per kind and layout, and the questions per kind.
const sums = new Map<string, number>();
const questions = new Map<Kind, number>();
const add = (key: string, value: number) => sums.set(key, (sums.get(key) ?? 0) + value);
const started = performance.now();

for (let pair = 0; pair < pairs; pair += 1) {
  const samples: [Kind, LocomoSample][] = [
    ['two people (LoCoMo)', locomo[pair]!],
    ['person and assistant (generated)', chats[pair]!],
  ];
  for (const layout of ['alone', 'one user'] as const) {
    const store = createSqliteStore({ path: ':memory:' });
    const memory = createMemory({
      store,
      tokenCounter: createGptTokenCounter(),
      embedder,
      ...(refiner === undefined ? {} : { refiner: { embedder: refiner, idle: () => true } }),
      queryEmbeddingTimeoutMs: false,
      worker: { autoStart: false },
      compaction: { settings: compactionSettingsForBudget(2000) },
    });
    try {
      const stored: { kind: Kind; sample: LocomoSample; scope: Scope; diaIdBySeq: ReadonlyMap<number, string> }[] = [];
      for (const [kind, sample] of samples) {
        const { scope, diaIdBySeq } = await ingestLocomoSample(sample, {
          memory,
          store,
          embedder,
          ...(refiner === undefined ? {} : { refiner }),
          tenantId: 'bench',
          ...(layout === 'alone' ? {} : { userId: 'both-kinds' }),
        });
        stored.push({ kind, sample, scope, diaIdBySeq });
      }
      for (const { kind, sample, scope, diaIdBySeq } of stored) {
        for (const question of sample.questions.filter((item) => item.evidence.length > 0)) {
          const hits = await recall(
            { store, embedder, ...(refiner === undefined ? {} : { refiner }) },
            { tenantId: scope.tenantId, userId: scope.userId },
            question.question,
            { k },
          );
          // Turn ids of the hits in the question's own conversation; another conversation's hit takes a place.
          const ranking = hits.map((hit) =>
            hit.conversationId === scope.conversationId ? (diaIdBySeq.get(hit.message.seq) ?? '') : '',
          );
          for (const cutoff of cutoffs)
            add(`${kind}\u0000${layout}\u0000${cutoff}`, evidenceFractionAt(ranking, question.evidence, cutoff));
          if (layout === 'alone') questions.set(kind, (questions.get(kind) ?? 0) + 1);
        }
      }
    } finally {
      await memory.close();
    }
  }
  log(
    `pair ${pair + 1} of ${pairs}: ${locomo[pair]!.sampleId} and ${chats[pair]!.sampleId}, ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

const percent = (kind: Kind, layout: Layout, cutoff: number) =>
  (100 * (sums.get(`${kind}\u0000${layout}\u0000${cutoff}`) ?? 0)) / (questions.get(kind) ?? 1);
const rows = [...questions].map(([kind, count]) => ({
  kind,
  questions: count,
  alone: { at5: percent(kind, 'alone', 5), at10: percent(kind, 'alone', 10) },
  oneUser: { at5: percent(kind, 'one user', 5), at10: percent(kind, 'one user', 10) },
}));
if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ embedder: embedder.model, refiner: refiner?.model, pairs, rows }, null, 1)}\n`,
  );
} else {
  log(
    `\n${embedder.model}${refiner === undefined ? '' : ` refined by ${refiner.model}`}; ${pairs} pairs; recall() k ${k}; ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
  log(
    formatTable(
      [
        { header: 'conversation' },
        { header: 'questions', align: 'right' },
        { header: 'alone frac@5', align: 'right' },
        { header: '@10', align: 'right' },
        { header: 'one user with both @5', align: 'right' },
        { header: '@10', align: 'right' },
      ],
      rows.map((row) => [
        row.kind,
        formatCount(row.questions),
        row.alone.at5.toFixed(1),
        row.alone.at10.toFixed(1),
        row.oneUser.at5.toFixed(1),
        row.oneUser.at10.toFixed(1),
      ]),
    ),
  );
}

// How much of a user's exact nearest neighbours SQLite's vector search returns (decisions 0020, 0025: a
// shortlist of the 2·k nearest codes by Hamming distance, rescored by exact cosine), for a user who has
// many messages: all of LoCoMo's conversations (5,882 turns) stored for one user, `--copies` times over,
// embedded as `mnemo serve` embeds them (`embedConversation`: each message with the one before it), with
// the default embedder (`--embedder static`, or `hashed` / `use-lite`). For LoCoMo's questions (the first
// `--questions` of each conversation), the share of the exact cosine top 10 and top k (over every stored vector of
// the user) that `searchVector` returns when recall() asks it for 50 candidates (k = 10) and for 155 (a
// 2,000-token context's k = 31), and the search's p50 in ms. Run: npm run bench:shortlist [-- --copies 4 --json].
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { HashedEmbedder, type Embedder } from '@mnemo/core';
import { makeNewMessage } from '@mnemo/core/testing';
import { embedConversation, embeddingText } from '@mnemo/core/internals';
import { StaticEmbedder, UseLiteEmbedder } from '@mnemo/models';
import { createSqliteStore } from '@mnemo/sqlite';
import { formatTable } from '../packages/cli/dist/output/format-table.js';
import { parseLocomoDataset } from '../packages/cli/dist/bench/parse-locomo-dataset.js';

const { values } = parseArgs({
  options: {
    data: {
      type: 'string',
      default: fileURLToPath(new URL('../../shared/data/locomo/locomo10.json', import.meta.url)),
    },
    embedder: { type: 'string', default: 'static' },
    copies: { type: 'string', default: '1' },
    questions: { type: 'string', default: '30' },
    json: { type: 'boolean', default: false },
  },
});

const embedder: Embedder =
  values.embedder === 'hashed'
    ? new HashedEmbedder()
    : values.embedder === 'use-lite'
      ? new UseLiteEmbedder()
      : new StaticEmbedder();
const samples = parseLocomoDataset(readFileSync(values.data, 'utf8'), values.data);
const directory = await mkdtemp(join(tmpdir(), 'mnemo-shortlist-'));
const store = createSqliteStore({ path: join(directory, 'shortlist.db') });
const user = { tenantId: 'default', userId: 'reader' };
try {
  // Every stored text, keyed by conversation and seq, to rank exactly.
  const texts: { conversationId: string; seq: number; text: string }[] = [];
  for (let copy = 0; copy < Number(values.copies); copy += 1) {
    for (const sample of samples) {
      const scope = { ...user, conversationId: `${sample.sampleId}-${copy}` };
      const stored = await store.appendMessages(
        scope,
        sample.turns.map((turn) => makeNewMessage(turn.content, { role: turn.role, name: turn.speaker })),
      );
      stored.forEach((message, index) =>
        texts.push({
          conversationId: scope.conversationId,
          seq: message.seq,
          text: embeddingText(message, stored[index - 1]),
        }),
      );
      await embedConversation({ store, embedder }, scope);
    }
  }
  const stored = await embedder.embed(texts.map((entry) => entry.text));
  const questions = samples.flatMap((sample) =>
    sample.questions.slice(0, Number(values.questions)).map((q) => q.question),
  );
  const queries = await embedder.embed(questions);
  // recall() asks each retriever for max(50, 5·k) candidates: 50 for k = 10, 155 for a 2,000-token context's 31.
  const sizes = [50, 155] as const;
  const kept = new Map<string, number>();
  const times: number[] = [];
  for (const query of queries) {
    const similarity = stored.map((vector, index) => ({ index, similarity: cosine(vector, query) }));
    similarity.sort((a, b) => b.similarity - a.similarity);
    const exact = (k: number) =>
      new Set(similarity.slice(0, k).map(({ index }) => `${texts[index]!.conversationId}\u0000${texts[index]!.seq}`));
    for (const k of sizes) {
      const started = performance.now();
      const hits = await store.searchVector(user, embedder.model, query, { k });
      if (k === sizes[0]) times.push(performance.now() - started);
      const returned = new Set(hits.map((hit) => `${hit.conversationId}\u0000${hit.message.seq}`));
      for (const top of [10, k]) {
        const found = [...exact(top)].filter((key) => returned.has(key)).length;
        kept.set(`${k}/${top}`, (kept.get(`${k}/${top}`) ?? 0) + found / top);
      }
    }
  }
  times.sort((a, b) => a - b);
  const percent = (key: string) => round((100 * kept.get(key)!) / queries.length);
  const result = {
    embedder: embedder.model,
    messages: texts.length,
    queries: queries.length,
    keptPercent: Object.fromEntries(
      sizes.flatMap((k) => [
        [`k${k}top10`, percent(`${k}/10`)],
        [`k${k}top${k}`, percent(`${k}/${k}`)],
      ]),
    ),
    searchP50Ms: round(times[Math.floor(times.length / 2)] ?? 0),
  };
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else
    process.stdout.write(
      `${embedder.model}: ${texts.length} messages of one user, ${queries.length} questions\n` +
        formatTable(
          [
            { header: 'searchVector k' },
            { header: 'exact top 10 returned', align: 'right' },
            { header: 'exact top k returned', align: 'right' },
          ],
          sizes.map((k) => [String(k), `${percent(`${k}/10`)} %`, `${percent(`${k}/${k}`)} %`]),
        ) +
        `searchVector p50 at k = 50: ${result.searchP50Ms} ms\n`,
    );
} finally {
  await store.close();
  await rm(directory, { recursive: true, force: true });
}

function cosine(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < a.length; index += 1) sum += a[index]! * b[index]!;
  return sum / Math.sqrt(norm(a) * norm(b));
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (const value of vector) sum += value * value;
  return sum;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

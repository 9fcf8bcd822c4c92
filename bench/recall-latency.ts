// Recall latency at scale: one user with --messages (default 100,000) messages over --conversations
// conversations in a SQLite file, every message with a 512-dimensional vector, then p50/p99 of recall()
// (keyword + vector search, fused) for --queries queries, and of each search alone. The stored vectors
// come from the hashed bag-of-words embedder (embedding 100k messages with USE-lite would take most of an
// hour and the search costs the same whatever model wrote the vectors); the real model's cost to embed
// one query, which recall() adds, is measured separately with USE-lite.
// Run: npm run bench:recall [-- --messages 20000 --queries 50 --k 10 --max-seconds 300 --json]; each step
// stops after --max-seconds (at least 5 queries).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createGptTokenCounter, defaultMessageLimits, HashedEmbedder, keywordTerms, prepareMessages, recall, type Embedder, type Store, type UserScope } from '@mnemo/core';
import { UseLiteEmbedder } from '@mnemo/models';
import { createSqliteStore } from '@mnemo/sqlite';
import { generateMeshChat } from '../examples/generate-mesh-chat.js';
import { formatCount, formatPlainTable } from './format-plain-table.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '100000' },
    conversations: { type: 'string', default: '100' },
    queries: { type: 'string', default: '100' },
    k: { type: 'string', default: '10' },
    'max-seconds': { type: 'string', default: '300' },
    json: { type: 'boolean', default: false },
  },
});
const settings = {
  messages: positiveInteger('--messages', values.messages),
  conversations: positiveInteger('--conversations', values.conversations),
  queries: positiveInteger('--queries', values.queries),
  k: positiveInteger('--k', values.k),
  maxSeconds: positiveInteger('--max-seconds', values['max-seconds']),
};
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
const user: UserScope = { tenantId: 'bench', userId: 'one-user' };
// The real model, loaded only when its step runs (outside the timed calls).
const useLite = new UseLiteEmbedder();

interface Latency {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
}

const directory = await mkdtemp(join(tmpdir(), 'mnemo-bench-recall-'));
const store = createSqliteStore({ path: join(directory, 'recall.db') });
try {
  const hashed = new HashedEmbedder({ dimensions: 512 });
  const ingestStarted = performance.now();
  const contents = await ingest(store, hashed);
  const ingestSeconds = (performance.now() - ingestStarted) / 1000;
  log(`stored ${formatCount(settings.messages)} messages with vectors for one user in ${ingestSeconds.toFixed(1)} s`);
  const queries = pickQueries(contents, settings.queries);
  const searchOptions = { k: Math.max(50, 5 * settings.k) };
  const keyword = await time('keyword search', queries, (query) => store.searchKeyword(user, keywordTerms(query), searchOptions));
  const queryVectors = await hashed.embed(queries);
  const vector = await time('vector search', queries, (_query, index) => store.searchVector(user, hashed.model, queryVectors[index]!, searchOptions));
  const fused = await time('recall()', queries, (query) => recall({ store, embedder: hashed }, user, query, { k: settings.k }));
  const embed = await time('USE-lite query embedding', queries, (query) => useLite.embed([query]), async () => void (await useLite.load()));
  const result = {
    messages: settings.messages,
    conversations: settings.conversations,
    k: settings.k,
    candidates: searchOptions.k,
    ingestSeconds: Math.round(ingestSeconds * 10) / 10,
    latencyMs: { recall: fused, keywordSearch: keyword, vectorSearch: vector, useLiteQueryEmbedding: embed },
    // recall() with USE-lite embeds the query first: its latency is about the sum of the two medians.
    estimatedRecallWithUseLiteP50Ms: Math.round((fused.p50Ms + embed.p50Ms) * 100) / 100,
  };
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    const rows = Object.entries(result.latencyMs).map(([name, latency]) => [name, String(latency.samples), latency.p50Ms.toFixed(2), latency.p99Ms.toFixed(2), latency.meanMs.toFixed(2)]);
    log(`\nrecall latency, one user, ${formatCount(settings.messages)} messages in ${settings.conversations} conversations, k = ${settings.k} (${searchOptions.k} candidates per search)\n`);
    log(formatPlainTable([{ header: 'step' }, { header: 'samples', right: true }, { header: 'p50 ms', right: true }, { header: 'p99 ms', right: true }, { header: 'mean ms', right: true }], rows));
    log(`\nrecall() with the hashed embedder's free query vector; with USE-lite add its query embedding: p50 ≈ ${result.estimatedRecallWithUseLiteP50Ms} ms.`);
  }
} finally {
  await store.close();
  await rm(directory, { recursive: true, force: true });
}

/** Appends the messages (mesh-radio chats, re-timed per conversation) and a hashed vector for each; returns every content. */
async function ingest(target: Store, embedder: Embedder): Promise<string[]> {
  const counter = createGptTokenCounter();
  const perConversation = Math.ceil(settings.messages / settings.conversations);
  const contents: string[] = [];
  for (let index = 0; index < settings.conversations; index += 1) {
    const count = Math.min(perConversation, settings.messages - index * perConversation);
    if (count <= 0) break;
    const chat = generateMeshChat({ messages: count, seed: index + 1 });
    const shiftMs = index * 86_400_000;
    const prepared = prepareMessages(
      chat.map((message) => ({ ...message, createdAt: new Date(Date.parse(message.createdAt) + shiftMs).toISOString() })),
      { limits: defaultMessageLimits, counter, now: Date.now },
    );
    const scope = { ...user, conversationId: `node-${String(index).padStart(4, '0')}` };
    for (let offset = 0; offset < prepared.length; offset += 500) {
      const stored = await target.appendMessages(scope, prepared.slice(offset, offset + 500));
      const vectors = await embedder.embed(stored.map((message) => message.content));
      await target.upsertEmbeddings(scope, embedder.model, stored.map((message, position) => ({ seq: message.seq, vector: vectors[position]! })));
      contents.push(...stored.map((message) => message.content));
    }
    if ((index + 1) % Math.max(1, Math.floor(settings.conversations / 10)) === 0) log(`  ${formatCount(contents.length)} messages stored`);
  }
  return contents;
}

/** Queries spread over the history: stored user-ish messages cut to their first eight words (deterministic). */
function pickQueries(contents: readonly string[], count: number): string[] {
  return Array.from({ length: count }, (_, index) => {
    const words = contents[Math.floor(((index + 0.5) * contents.length) / count)]!.split(/\s+/).slice(0, 8);
    return words.join(' ');
  });
}

/** Times `run` once per query after one untimed warm-up; stops early (after at least 5) once --max-seconds have passed. */
async function time(
  name: string,
  queries: readonly string[],
  run: (query: string, index: number) => Promise<unknown>,
  warmUp: () => Promise<void> = async () => void (await run(queries[0]!, 0)),
): Promise<Latency> {
  await warmUp();
  const deadline = performance.now() + settings.maxSeconds * 1000;
  const durations: number[] = [];
  for (const [index, query] of queries.entries()) {
    if (performance.now() > deadline && durations.length >= 5) {
      log(`  ${name}: stopped after ${durations.length} queries (--max-seconds)`);
      break;
    }
    const started = performance.now();
    await run(query, index);
    durations.push(performance.now() - started);
  }
  durations.sort((a, b) => a - b);
  const at = (fraction: number) => durations[Math.min(durations.length - 1, Math.ceil(fraction * durations.length) - 1)]!;
  const mean = durations.reduce((sum, value) => sum + value, 0) / durations.length;
  log(`  ${name}: p50 ${at(0.5).toFixed(2)} ms over ${durations.length} queries`);
  return { samples: durations.length, p50Ms: round(at(0.5)), p99Ms: round(at(0.99)), meanMs: round(mean) };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function positiveInteger(flag: string, value: string | undefined): number {
  const number = Number(value);
  if (value === undefined || !/^\d+$/.test(value) || number < 1) throw new RangeError(`${flag} must be a positive integer (got ${String(value)})`);
  return number;
}

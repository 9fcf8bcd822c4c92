// Recall latency at scale, before and after issue 11's search work, side by side in one run: one user with
// --messages (default 100,000) messages over --conversations conversations, the first --vector-messages
// (default all, at most 100,000) of them with a 512-dimensional vector, in a SQLite file and in a fresh
// PostgreSQL schema (--store sqlite|postgres|both; PostgreSQL from --postgres-url, MNEMO_BENCH_DATABASE_URL
// or MNEMO_TEST_DATABASE_URL, its schema dropped after). Then p50/p99 of keyword search, vector search and
// recall() (both, fused) for --queries queries, each query timed on the store as it is ("after") and, right
// before, on the pre-issue search paths rebuilt beside it on the same data ("before", see recall-before.ts).
// The stored vectors come from the hashed bag-of-words embedder (embedding 100k messages with USE-lite
// would take most of an hour and a search costs the same whatever model wrote the vectors); the real
// model's cost to embed one query, which recall() adds, is measured separately with USE-lite.
// Run: npm run bench:recall [-- --store postgres --messages 1000000 --vector-messages 0 --queries 50
// --k 10 --max-seconds 300 --json]; each step stops after --max-seconds (at least 5 queries).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  createGptTokenCounter,
  defaultMessageLimits,
  HashedEmbedder,
  type Embedder,
  type Store,
  type UserScope,
} from '@mnemo/core';
import { embeddingText, keywordTerms, prepareMessages, recall } from '@mnemo/core/internals';
import { StaticEmbedder, UseLiteEmbedder } from '@mnemo/models';
import { createPostgresStore } from '@mnemo/postgres';
import { createSqliteStore } from '@mnemo/sqlite';
import pg from 'pg';
import { generateMeshChat } from '../examples/generate-mesh-chat.js';
import { formatCount, formatTable } from '../packages/cli/dist/output/format-table.js';
import { countFlag } from './flags.js';
import { createPostgresBefore, createSqliteBefore, type BeforeSearch } from './recall-before.js';

const resultsPath = fileURLToPath(new URL('./results/recall-latency.json', import.meta.url));
const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'both' },
    messages: { type: 'string', default: '100000' },
    'vector-messages': { type: 'string' },
    conversations: { type: 'string', default: '100' },
    queries: { type: 'string', default: '100' },
    k: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '4' },
    'max-seconds': { type: 'string', default: '300' },
    'postgres-url': { type: 'string' },
    'skip-use-lite': { type: 'boolean', default: false },
    'embedders-only': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const messages = countFlag('--messages', values.messages, 1);
const settings = {
  messages,
  vectorMessages: Math.min(
    messages,
    countFlag('--vector-messages', values['vector-messages'] ?? String(Math.min(messages, 100_000)), 0),
  ),
  conversations: countFlag('--conversations', values.conversations, 1),
  queries: countFlag('--queries', values.queries, 1),
  k: countFlag('--k', values.k, 1),
  concurrency: countFlag('--concurrency', values.concurrency, 1),
  maxSeconds: countFlag('--max-seconds', values['max-seconds'], 1),
};
if (!['sqlite', 'postgres', 'both'].includes(values.store))
  throw new RangeError(`--store must be sqlite, postgres or both (got ${values.store})`);
const postgresUrl =
  values['postgres-url'] ?? process.env['MNEMO_BENCH_DATABASE_URL'] ?? process.env['MNEMO_TEST_DATABASE_URL'];
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
const user: UserScope = { tenantId: 'bench', userId: 'one-user' };
const hashed = new HashedEmbedder({ dimensions: 512 });
const searchOptions = { k: Math.max(50, 5 * settings.k) };

interface Latency {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
}
type Step = 'keywordSearch' | 'vectorSearch' | 'recall';
interface StoreResult {
  readonly store: 'SQLite' | 'PostgreSQL';
  readonly ingestSeconds: number;
  readonly latencyMs: Record<Step, { before: Latency; after: Latency } | undefined>;
}

const notes: string[] = [];
const results: StoreResult[] = [];
const chats = prepareChats();
const queries = pickQueries(chats.flat(), settings.queries);
if (values.store !== 'postgres' && !values['embedders-only']) results.push(await runSqlite());
if (values.store !== 'sqlite' && !values['embedders-only']) {
  if (postgresUrl === undefined)
    notes.push('PostgreSQL skipped: set --postgres-url, MNEMO_BENCH_DATABASE_URL or MNEMO_TEST_DATABASE_URL.');
  else results.push(await runPostgres(postgresUrl));
}
const embed = values['skip-use-lite'] || settings.vectorMessages === 0 ? undefined : await measureUseLite();
// The model a query is embedded with, side by side: the static default and USE-lite (its teacher).
const embedders = values['skip-use-lite'] ? undefined : await measureEmbedders(chats.flat());
const result = {
  settings: { ...settings, candidates: searchOptions.k },
  stores: results,
  useLiteQueryEmbedding: embed,
  embedders,
  notes,
};
await mkdir(join(resultsPath, '..'), { recursive: true });
await writeFile(resultsPath, `${JSON.stringify(result, null, 2)}\n`);
if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
else printTables();

async function runSqlite(): Promise<StoreResult> {
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-bench-recall-'));
  const path = join(directory, 'recall.db');
  const store = createSqliteStore({ path });
  const before = createSqliteBefore(store, path, user, hashed.dimensions);
  try {
    return await measureStore('SQLite', store, before, async () => undefined);
  } finally {
    await before.close();
    await store.close();
    await rm(directory, { recursive: true, force: true });
  }
}

async function runPostgres(url: string): Promise<StoreResult> {
  const schema = `mnemo_recall_${Date.now()}`;
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  const store = await createPostgresStore({ connectionString: url, schema, poolMax: settings.concurrency + 2 });
  const before = createPostgresBefore(store, url, schema);
  try {
    // What autovacuum gives a running database (untimed): statistics, and the GIN pending list merged.
    const vacuum = async () => {
      const tables = await admin.query<{ name: string }>(
        "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND (tablename IN ('messages', 'conversations', 'keyword_terms') OR tablename LIKE 'vectors\\_%')",
        [schema],
      );
      for (const { name } of tables.rows) await admin.query(`VACUUM ANALYZE "${schema}"."${name}"`);
      // The user's keyword copy in this process (loaded in the background after a first search otherwise; SQL answers meanwhile).
      const loading = performance.now();
      const heap = process.memoryUsage().heapUsed;
      await store.warmKeywordIndex(user);
      log(
        `PostgreSQL: keyword index of the user loaded in ${((performance.now() - loading) / 1000).toFixed(1)} s (heap +${Math.round((process.memoryUsage().heapUsed - heap) / 1e6)} MB)`,
      );
    };
    return await measureStore('PostgreSQL', store, before, vacuum);
  } finally {
    await before.close();
    await store.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

async function measureStore(
  name: StoreResult['store'],
  store: Store,
  before: BeforeSearch,
  afterIngest: () => Promise<void>,
): Promise<StoreResult> {
  log(
    `${name}: storing ${formatCount(settings.messages)} messages (${formatCount(settings.vectorMessages)} with vectors) for one user`,
  );
  const started = performance.now();
  await ingest(store, before, hashed);
  const ingestSeconds = Math.round((performance.now() - started) / 100) / 10;
  log(`${name}: stored in ${ingestSeconds} s`);
  await afterIngest();
  const queryVectors = await hashed.embed(queries);
  const withVectors = settings.vectorMessages > 0;
  const keyword = await timePair(
    `${name} keyword search`,
    (target) => (query) => target.searchKeyword(user, keywordTerms(query), searchOptions),
    store,
    before.store,
  );
  const vector = withVectors
    ? await timePair(
        `${name} vector search`,
        (target) => (_query, index) => target.searchVector(user, hashed.model, queryVectors[index]!, searchOptions),
        store,
        before.store,
      )
    : undefined;
  const fused = withVectors
    ? await timePair(
        `${name} recall()`,
        (target) => (query) => recall({ store: target, embedder: hashed }, user, query, { k: settings.k }),
        store,
        before.store,
      )
    : undefined;
  return { store: name, ingestSeconds, latencyMs: { keywordSearch: keyword, vectorSearch: vector, recall: fused } };
}

/** The chats of the conversations: mesh-radio chats (seed = conversation), re-timed one day apart, prepared once. */
function prepareChats() {
  const counter = createGptTokenCounter();
  const perConversation = Math.ceil(settings.messages / settings.conversations);
  return Array.from({ length: settings.conversations }, (_, index) => {
    const size = Math.max(0, Math.min(perConversation, settings.messages - index * perConversation));
    const shiftMs = index * 86_400_000;
    const chat = generateMeshChat({ messages: size, seed: index + 1 }).map((message) => ({
      ...message,
      createdAt: new Date(Date.parse(message.createdAt) + shiftMs).toISOString(),
    }));
    return prepareMessages(chat, { limits: defaultMessageLimits, counter, now: Date.now });
  });
}

/** Appends every conversation (--concurrency at once, 500 messages a call) and a hashed vector for the first --vector-messages. */
async function ingest(target: Store, before: BeforeSearch, embedder: Embedder): Promise<void> {
  let next = 0;
  let stored = 0;
  let embedded = 0;
  const worker = async () => {
    for (let index = next++; index < chats.length; index = next++) {
      const conversationId = `node-${String(index).padStart(4, '0')}`;
      const scope = { ...user, conversationId };
      const chat = chats[index]!;
      for (let offset = 0; offset < chat.length; offset += 500) {
        const appended = await target.appendMessages(scope, chat.slice(offset, offset + 500));
        const embed = appended.slice(0, Math.max(0, settings.vectorMessages - embedded));
        embedded += embed.length;
        if (embed.length > 0) {
          const vectors = await embedder.embed(embed.map((message) => message.content));
          await target.upsertEmbeddings(
            scope,
            embedder.model,
            embed.map((message, position) => ({ seq: message.seq, vector: vectors[position]! })),
          );
          before.addVectors(
            conversationId,
            embed.map((message) => message.seq),
            vectors,
          );
        }
        stored += appended.length;
      }
      if ((index + 1) % Math.max(1, Math.floor(chats.length / 10)) === 0)
        log(`  ${formatCount(stored)} messages stored`);
    }
  };
  await Promise.all(Array.from({ length: settings.concurrency }, worker));
}

/** Queries spread over the history: stored messages cut to their first eight words (deterministic). */
function pickQueries(contents: readonly { content: string }[], size: number): string[] {
  return Array.from({ length: size }, (_, index) =>
    contents[Math.floor(((index + 0.5) * contents.length) / size)]!.content.split(/\s+/).slice(0, 8).join(' '),
  );
}

/**
 * Times one step on the pre-issue paths and on the store, query by query (so both see the same machine
 * load), which goes first alternating, after one untimed warm-up each; stops early (after at least 5) once --max-seconds have passed.
 */
async function timePair(
  name: string,
  step: (target: Store) => (query: string, index: number) => Promise<unknown>,
  after: Store,
  before: Store,
): Promise<{ before: Latency; after: Latency }> {
  const runs = { before: step(before), after: step(after) };
  await runs.before(queries[0]!, 0);
  await runs.after(queries[0]!, 0);
  const durations = { before: [] as number[], after: [] as number[] };
  const deadline = performance.now() + settings.maxSeconds * 1000;
  for (const [index, query] of queries.entries()) {
    if (performance.now() > deadline && index >= 5) {
      notes.push(`${name}: stopped after ${index} queries (--max-seconds)`);
      break;
    }
    // Alternating which side goes first: the second run of a query finds its pages cached by the first.
    for (const side of index % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
      const started = performance.now();
      await runs[side](query, index);
      durations[side].push(performance.now() - started);
    }
  }
  const latency = { before: summarize(durations.before), after: summarize(durations.after) };
  log(
    `  ${name}: p50 ${latency.before.p50Ms} ms before, ${latency.after.p50Ms} ms after (${latency.after.samples} queries)`,
  );
  return latency;
}

async function measureUseLite(): Promise<Latency> {
  const model = new UseLiteEmbedder();
  await model.load();
  await model.embed([queries[0]!]);
  const durations: number[] = [];
  for (const query of queries) {
    const started = performance.now();
    await model.embed([query]);
    durations.push(performance.now() - started);
  }
  return summarize(durations);
}

interface EmbedderCost {
  readonly model: string;
  readonly loadMs: number;
  readonly query: Latency;
  /** Chat turns (each with the turn before it, as the embed job embeds them) embedded per second, batches of 64, one thread. */
  readonly turnsPerSecond: number;
  /** The same per second of this process's CPU time (user + system): what one free core would do, less noisy on a shared machine. */
  readonly turnsPerCpuSecond: number;
}

async function measureEmbedders(
  messages: readonly { role: string; content: string }[],
): Promise<{ useLite: EmbedderCost; static: EmbedderCost }> {
  const turns = messages
    .slice(0, 2000)
    .map((message, index) => embeddingText(message as never, index === 0 ? undefined : (messages[index - 1] as never)));
  const cost = async (
    create: () => Embedder & { load?: () => Promise<void> },
    turnCount: number,
  ): Promise<EmbedderCost> => {
    const loadStarted = performance.now();
    const model = create();
    await model.load?.();
    await model.embed([queries[0]!]);
    const loadMs = Math.round(performance.now() - loadStarted);
    // A running server has embedded before: one untimed round over the queries (JIT, the tokenizer's cache).
    for (const query of queries) await model.embed([query]);
    const durations: number[] = [];
    for (const query of queries) {
      const started = performance.now();
      await model.embed([query]);
      durations.push(performance.now() - started);
    }
    const sample = turns.slice(0, turnCount);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    for (let start = 0; start < sample.length; start += 64) await model.embed(sample.slice(start, start + 64));
    const cpu = process.cpuUsage(cpuBefore);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    return {
      model: model.model,
      loadMs,
      query: summarize(durations),
      turnsPerSecond: Math.round(sample.length / ((performance.now() - started) / 1000)),
      turnsPerCpuSecond: Math.round(sample.length / cpuSeconds),
    };
  };
  const useLite = await cost(() => new UseLiteEmbedder(), 256);
  const staticCost = await cost(() => new StaticEmbedder(), turns.length);
  log(
    `\nquery embedding and throughput, one thread (${queries.length} queries; ${turns.length} chat turns with the turn before, 256 for USE-lite):`,
  );
  for (const entry of [useLite, staticCost]) {
    log(
      `  ${entry.model}: load ${entry.loadMs} ms, query p50 ${entry.query.p50Ms} ms, p99 ${entry.query.p99Ms} ms, ${formatCount(entry.turnsPerSecond)} turns/s (${formatCount(entry.turnsPerCpuSecond)} per CPU second)`,
    );
  }
  return { useLite, static: staticCost };
}

function summarize(durations: number[]): Latency {
  const sorted = [...durations].sort((a, b) => a - b);
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
  const round = (value: number) => Math.round(value * 1000) / 1000;
  return {
    samples: sorted.length,
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
    meanMs: round(sorted.reduce((sum, value) => sum + value, 0) / sorted.length),
  };
}

function printTables(): void {
  const rows = results.flatMap((entry) =>
    (Object.entries(entry.latencyMs) as [Step, { before: Latency; after: Latency } | undefined][]).flatMap(
      ([step, pair]) =>
        pair === undefined
          ? []
          : [
              [
                entry.store,
                step,
                String(pair.after.samples),
                pair.before.p50Ms.toFixed(2),
                pair.after.p50Ms.toFixed(2),
                pair.before.p99Ms.toFixed(2),
                pair.after.p99Ms.toFixed(2),
                `${(pair.before.p50Ms / pair.after.p50Ms).toFixed(1)}×`,
              ],
            ],
    ),
  );
  log(
    `\nrecall latency, one user, ${formatCount(settings.messages)} messages (${formatCount(settings.vectorMessages)} with vectors) in ${settings.conversations} conversations, k = ${settings.k} (${searchOptions.k} candidates per search)\n`,
  );
  log(
    formatTable(
      [
        { header: 'store' },
        { header: 'step' },
        { header: 'queries', align: 'right' },
        { header: 'p50 before', align: 'right' },
        { header: 'p50 after', align: 'right' },
        { header: 'p99 before', align: 'right' },
        { header: 'p99 after', align: 'right' },
        { header: 'p50 speed-up', align: 'right' },
      ],
      rows,
    ),
  );
  if (embed !== undefined)
    log(
      `\nUSE-lite query embedding (recall() with the real model adds it): p50 ${embed.p50Ms} ms, p99 ${embed.p99Ms} ms.`,
    );
  log(
    'before: the pre-issue search paths on the same data (bench/recall-before.ts; SQLite keyword search: FTS5 as before decision 0027); PostgreSQL vector search did not change.',
  );
  for (const note of notes) log(note);
  log(`JSON: ${resultsPath}`);
}

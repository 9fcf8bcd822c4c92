// Scale benchmark: ingest 1,000,000 messages over 10,000 conversations of 100 users into SQLite and into
// PostgreSQL, then time context builds (token-window and summary) at that size, then give 100,000 of the
// messages hashed-embedder vectors and time recall (keyword search, vector search, and recall() fusing
// both), side by side in one run. Run: npm run bench:scale [-- --messages 200000 --vector-messages 20000
// --postgres-url postgres://…]. PostgreSQL comes from --postgres-url, MNEMO_BENCH_DATABASE_URL or
// MNEMO_TEST_DATABASE_URL (a fresh schema, dropped after).
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  createGptTokenCounter,
  createMemory,
  defaultMessageLimits,
  HashedEmbedder,
  type ContextPolicy,
  type NewMessage,
  type Scope,
  type Store,
} from '@mnemo/core';
import { prepareMessages } from '@mnemo/core/internals';
import { createPostgresStore } from '@mnemo/postgres';
import { createSqliteStore } from '@mnemo/sqlite';
import pg from 'pg';
import { generateMeshChat } from '../examples/generate-mesh-chat.js';
import { formatCount, formatTable, type TableColumn } from '../packages/cli/dist/output/format-table.js';
import { measureRecall, type RecallResult } from './measure-recall.js';

const resultsPath = fileURLToPath(new URL('./results/scale.json', import.meta.url));
const policies: readonly ContextPolicy[] = ['token-window', 'summary'];
// Distinct generated chats the conversations cycle through: enough variety, prepared (validated and
// token-counted) once, outside the timed ingest, which then measures the store alone.
const distinctChats = 200;
// The benchmark's stand-in for an embedding model: instant and deterministic. Search costs depend on the
// vectors' length and count, not on which model wrote them.
const embedder = new HashedEmbedder();

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '1000000' },
    conversations: { type: 'string' },
    users: { type: 'string', default: '100' },
    batch: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '4' },
    samples: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '3' },
    'max-tokens': { type: 'string', default: '1000' },
    'vector-messages': { type: 'string', default: '100000' },
    'recall-samples': { type: 'string', default: '200' },
    'recall-rounds': { type: 'string', default: '3' },
    'recall-max-seconds': { type: 'string', default: '300' },
    'postgres-url': { type: 'string' },
    'skip-sqlite': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const messages = positiveInteger('--messages', values.messages);
const settings = {
  messages,
  conversations: positiveInteger(
    '--conversations',
    values.conversations ?? String(Math.max(1, Math.round(messages / 100))),
  ),
  users: positiveInteger('--users', values.users),
  batch: positiveInteger('--batch', values.batch),
  concurrency: positiveInteger('--concurrency', values.concurrency),
  samples: positiveInteger('--samples', values.samples),
  rounds: positiveInteger('--rounds', values.rounds),
  maxTokens: positiveInteger('--max-tokens', values['max-tokens']),
  vectorMessages: positiveInteger('--vector-messages', values['vector-messages']),
  recallSamples: positiveInteger('--recall-samples', values['recall-samples']),
  recallRounds: positiveInteger('--recall-rounds', values['recall-rounds']),
  recallMaxSeconds: positiveInteger('--recall-max-seconds', values['recall-max-seconds']),
};
const postgresUrl =
  values['postgres-url'] ?? process.env['MNEMO_BENCH_DATABASE_URL'] ?? process.env['MNEMO_TEST_DATABASE_URL'];
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);

interface Latency {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
}

interface StoreResult {
  readonly store: string;
  readonly details: string;
  readonly ingest: {
    readonly messages: number;
    readonly appends: number;
    readonly seconds: number;
    readonly messagesPerSecond: number;
  };
  readonly compactSeconds: number;
  readonly context: Readonly<Record<string, Latency>>;
  readonly recall: RecallResult;
  /** PostgreSQL: index scans the recall timing made, per index (pg_stat_user_indexes), to show which index answered. */
  readonly recallIndexScans?: Readonly<Record<string, number>>;
  readonly sizeBytes: number;
}

const counter = createGptTokenCounter();
const perConversation = Math.ceil(settings.messages / settings.conversations);
const chats = Array.from({ length: Math.min(distinctChats, settings.conversations) }, (_, index) =>
  prepareMessages(generateMeshChat({ messages: perConversation, seed: index + 1 }), {
    limits: defaultMessageLimits,
    counter,
    now: Date.now,
  }),
);
const results: StoreResult[] = [];
const notes: string[] = [];

if (!values['skip-sqlite']) {
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-bench-scale-'));
  try {
    const path = join(directory, 'scale.db');
    const store = createSqliteStore({ path });
    results.push(
      await measureStore('SQLite', 'file, WAL, one connection (the driver is synchronous)', store, 1, {
        size: async () => fileSize(path),
      }),
    );
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
if (postgresUrl === undefined) {
  notes.push('PostgreSQL skipped: set --postgres-url, MNEMO_BENCH_DATABASE_URL or MNEMO_TEST_DATABASE_URL.');
} else {
  const schema = `mnemo_scale_${Date.now()}`;
  const admin = new pg.Pool({ connectionString: postgresUrl, max: 1 });
  try {
    const store = await createPostgresStore({
      connectionString: postgresUrl,
      schema,
      poolMax: settings.concurrency + 2,
    });
    const version =
      (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
    const details = `${version.split(' ')[0]}, pool of ${settings.concurrency + 2}, ${settings.concurrency} concurrent writers`;
    results.push(
      await measureStore('PostgreSQL', details, store, settings.concurrency, {
        size: () => schemaSize(admin, schema),
        afterIngest: () => analyze(admin, schema),
        afterEmbed: () => vacuumAnalyze(admin, schema),
        indexScans: () => indexScans(admin, schema),
      }),
    );
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

const report = {
  benchmark: 'scale',
  createdAt: new Date().toISOString(),
  node: process.version,
  settings,
  notes,
  results,
};
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(resultsPath, `${JSON.stringify(report, null, 2)}\n`);
if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
else {
  log('');
  log(formatStoreTable(results));
  log('');
  log(formatRecallTable(results));
  log('');
  log(
    `${formatCount(settings.messages)} messages in ${formatCount(settings.conversations)} conversations of ${settings.users} users, ` +
      `appended in batches of ${settings.batch}; context builds: ${settings.samples} conversations × ${settings.rounds} rounds per policy, ` +
      `budget ${settings.maxTokens} tokens, each build reads the store and writes its usage entry.`,
  );
  log(
    `Recall: ${formatCount(results[0]?.recall.vectors ?? 0)} messages (every message of the first conversations, all users) embedded with ${embedder.model}; ` +
      `${settings.recallSamples} queries × ${settings.recallRounds} rounds of 5 words from the asking user's messages; keyword and vector search for ` +
      `50 candidates (recall's default), recall() k = 10.`,
  );
  for (const result of results) {
    if (result.recall.truncated) {
      log(
        `${result.store}: recall timing stopped after ${settings.recallMaxSeconds} s (--recall-max-seconds) at ${result.recall.recall.samples} queries.`,
      );
    }
    if (result.recallIndexScans !== undefined)
      log(`${result.store} index scans during the recall timing: ${JSON.stringify(result.recallIndexScans)}`);
  }
  for (const note of notes) log(note);
  log(`JSON: ${resultsPath}`);
}

/** What a store's measurement needs besides the store: its size, and untimed maintenance hooks. */
interface StoreHooks {
  readonly size: () => Promise<number>;
  readonly afterIngest?: () => Promise<void>;
  readonly afterEmbed?: () => Promise<void>;
  readonly indexScans?: () => Promise<Record<string, number>>;
}

/** Ingests every conversation with `writers` concurrent writers, compacts the sampled ones, times their context builds, then embeds a slice and times recall. */
async function measureStore(
  name: string,
  details: string,
  store: Store,
  writers: number,
  hooks: StoreHooks,
): Promise<StoreResult> {
  const memory = createMemory({ store, tokenCounter: counter, worker: { autoStart: false } });
  try {
    log(`${name}: ingesting ${formatCount(settings.messages)} messages ...`);
    const ingest = await ingestAll(name, store, writers);
    await hooks.afterIngest?.();
    // The summary policy needs a summary to read: compact the sampled conversations, as a worker would have.
    const sampled = sampleScopes();
    const compactStarted = performance.now();
    for (const scope of sampled) await memory.compact(scope);
    const compactSeconds = (performance.now() - compactStarted) / 1000;
    const context: Record<string, Latency> = {};
    for (const policy of policies) {
      log(`${name}: timing ${policy} context builds ...`);
      context[policy] = await timeBuilds(memory, sampled, policy);
    }
    const embedded = Array.from(
      { length: Math.min(settings.conversations, Math.ceil(settings.vectorMessages / perConversation)) },
      (_, index) => scopeOf(index),
    );
    log(`${name}: embedding ${formatCount(embedded.length * perConversation)} messages, then timing recall ...`);
    let scansBefore: Record<string, number> = {};
    const recallResult = await measureRecall({
      store,
      embedder,
      embedded,
      samples: settings.recallSamples,
      rounds: settings.recallRounds,
      maxSeconds: settings.recallMaxSeconds,
      afterEmbed: async () => {
        await hooks.afterEmbed?.();
        scansBefore = (await hooks.indexScans?.()) ?? {};
      },
      log,
    });
    const scansAfter = await hooks.indexScans?.();
    const recallIndexScans =
      scansAfter === undefined
        ? undefined
        : Object.fromEntries(
            Object.entries(scansAfter).flatMap(([index, scans]) =>
              scans - (scansBefore[index] ?? 0) > 0 ? [[index, scans - (scansBefore[index] ?? 0)]] : [],
            ),
          );
    return {
      store: name,
      details,
      ingest,
      compactSeconds,
      context,
      recall: recallResult,
      ...(recallIndexScans === undefined ? {} : { recallIndexScans }),
      sizeBytes: await hooks.size(),
    };
  } finally {
    await memory.close();
  }
}

async function ingestAll(name: string, store: Store, writers: number): Promise<StoreResult['ingest']> {
  let next = 0;
  let appends = 0;
  let written = 0;
  let reported = 0;
  const started = performance.now();
  const writer = async () => {
    for (let index = next++; index < settings.conversations; index = next++) {
      const batch = conversationMessages(index);
      for (let offset = 0; offset < batch.length; offset += settings.batch) {
        await store.appendMessages(scopeOf(index), batch.slice(offset, offset + settings.batch));
        appends += 1;
      }
      written += batch.length;
      if (written - reported >= settings.messages / 10) {
        reported = written;
        log(
          `${name}: ${formatCount(written)} messages, ${Math.round(written / ((performance.now() - started) / 1000))} msgs/s`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: writers }, writer));
  const seconds = (performance.now() - started) / 1000;
  return { messages: written, appends, seconds: round(seconds, 1), messagesPerSecond: Math.round(written / seconds) };
}

/** The messages of conversation `index`: one of the prepared chats, re-timed to start on its own day. */
function conversationMessages(index: number): NewMessage[] {
  const count = Math.min(perConversation, settings.messages - index * perConversation);
  if (count <= 0) return [];
  const chat = chats[index % chats.length]!;
  const shiftMs = index * 86_400_000;
  return chat
    .slice(0, count)
    .map((message) => ({ ...message, createdAt: new Date(Date.parse(message.createdAt) + shiftMs).toISOString() }));
}

async function timeBuilds(
  memory: ReturnType<typeof createMemory>,
  scopes: readonly Scope[],
  policy: ContextPolicy,
): Promise<Latency> {
  // One untimed build first: JIT warm-up and cold caches belong to no percentile.
  await memory.buildContext(scopes[0]!, { policy, maxTokens: settings.maxTokens });
  const durations: number[] = [];
  for (let round = 0; round < settings.rounds; round += 1) {
    for (const scope of scopes) {
      const started = performance.now();
      await memory.buildContext(scope, { policy, maxTokens: settings.maxTokens });
      durations.push(performance.now() - started);
    }
  }
  durations.sort((a, b) => a - b);
  const at = (fraction: number) =>
    durations[Math.min(durations.length - 1, Math.ceil(fraction * durations.length) - 1)]!;
  const mean = durations.reduce((sum, value) => sum + value, 0) / durations.length;
  return { samples: durations.length, p50Ms: round(at(0.5), 2), p99Ms: round(at(0.99), 2), meanMs: round(mean, 2) };
}

// Conversations spread evenly over the whole range, so the sample spans every user and every insert period.
function sampleScopes(): Scope[] {
  const count = Math.min(settings.samples, settings.conversations);
  return Array.from({ length: count }, (_, index) => scopeOf(Math.floor((index * settings.conversations) / count)));
}

function scopeOf(index: number): Scope {
  return {
    tenantId: 'bench',
    userId: `user-${String(index % settings.users).padStart(3, '0')}`,
    conversationId: `node-${String(index).padStart(5, '0')}`,
  };
}

async function fileSize(path: string): Promise<number> {
  let total = 0;
  for (const suffix of ['', '-wal'])
    total += await stat(`${path}${suffix}`).then(
      (info) => info.size,
      () => 0,
    );
  return total;
}

async function schemaSize(admin: pg.Pool, schema: string): Promise<number> {
  const result = await admin.query<{ bytes: string }>(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind = 'r'`,
    [schema],
  );
  return Number(result.rows[0]?.bytes ?? 0);
}

// Statistics as autovacuum would have gathered them on a database that has been running: untimed.
async function analyze(admin: pg.Pool, schema: string): Promise<void> {
  await admin.query(`ANALYZE "${schema}".conversations, "${schema}".messages`);
}

// What autovacuum does on a running database after a burst of writes, untimed: statistics, and the GIN
// index's pending list (where fast updates park new entries, which every keyword search reads in full)
// merged into the index.
async function vacuumAnalyze(admin: pg.Pool, schema: string): Promise<void> {
  const tables = await admin.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND (tablename IN ('messages', 'conversations') OR tablename LIKE 'vectors\\_%')",
    [schema],
  );
  for (const { name } of tables.rows) await admin.query(`VACUUM ANALYZE "${schema}"."${name}"`);
}

// Index scans so far per index of the schema's search tables. The statistics reach pg_stat_user_indexes
// up to a second after the scans (PostgreSQL 15 flushes them at most once a second), hence the pause.
async function indexScans(admin: pg.Pool, schema: string): Promise<Record<string, number>> {
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const result = await admin.query<{ name: string; scans: string }>(
    "SELECT indexrelname AS name, idx_scan AS scans FROM pg_stat_user_indexes WHERE schemaname = $1 AND (relname = 'messages' OR relname LIKE 'vectors\\_%')",
    [schema],
  );
  return Object.fromEntries(result.rows.map((row) => [row.name, Number(row.scans)]));
}

function formatStoreTable(rows: readonly StoreResult[]): string {
  const columns: TableColumn[] = [
    { header: 'store' },
    { header: 'ingest msgs/s', align: 'right' },
    { header: 'ingest s', align: 'right' },
    ...policies.flatMap((policy): TableColumn[] => [
      { header: `${policy} p50 ms`, align: 'right' },
      { header: `${policy} p99 ms`, align: 'right' },
    ]),
    { header: 'size MB', align: 'right' },
    { header: 'details' },
  ];
  const cells = rows.map((row) => [
    row.store,
    formatCount(row.ingest.messagesPerSecond),
    row.ingest.seconds.toFixed(1),
    ...policies.flatMap((policy) => [row.context[policy]!.p50Ms.toFixed(2), row.context[policy]!.p99Ms.toFixed(2)]),
    formatCount(Math.round(row.sizeBytes / 1_000_000)),
    row.details,
  ]);
  return formatTable(columns, cells);
}

function formatRecallTable(rows: readonly StoreResult[]): string {
  const columns: TableColumn[] = [
    { header: 'store' },
    { header: 'vectors', align: 'right' },
    { header: 'embed vec/s', align: 'right' },
    { header: 'keyword p50 ms', align: 'right' },
    { header: 'keyword p99 ms', align: 'right' },
    { header: 'vector p50 ms', align: 'right' },
    { header: 'vector p99 ms', align: 'right' },
    { header: 'recall p50 ms', align: 'right' },
    { header: 'recall p99 ms', align: 'right' },
    { header: 'hits', align: 'right' },
    { header: 'queries', align: 'right' },
  ];
  const cells = rows.map((row) => [
    row.store,
    formatCount(row.recall.vectors),
    formatCount(row.recall.vectorsPerSecond),
    row.recall.keyword.p50Ms.toFixed(2),
    row.recall.keyword.p99Ms.toFixed(2),
    row.recall.vector.p50Ms.toFixed(2),
    row.recall.vector.p99Ms.toFixed(2),
    row.recall.recall.p50Ms.toFixed(2),
    row.recall.recall.p99Ms.toFixed(2),
    row.recall.meanHits.toFixed(1),
    formatCount(row.recall.recall.samples),
  ]);
  return formatTable(columns, cells);
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

function positiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`${flag} must be a positive integer (got ${JSON.stringify(text)})`);
    process.exit(2);
  }
  return value;
}

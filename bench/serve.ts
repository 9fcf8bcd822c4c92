// npm run bench:serve: the real `mnemo serve` under load. The built CLI (default config: SQLite file,
// static embedder, worker processes) and a scripted OpenAI-protocol upstream run as their own
// processes; autocannon drives them from this one. Every row at 1, 10 and 50 connections, side by side;
// then the background backlog when the load stops and the seconds until it drained. With
// MNEMO_TEST_DATABASE_URL set, the same rows on PostgreSQL with two `serve` replicas.
// Writes bench/results/serve.json (or --out). --cli runs another build (e.g. an older commit's, with
// --rate-limit-off for builds whose keyless default was 50 req/s); --embedder overrides MNEMO_EMBEDDER (a comma list, e.g. use-lite,static, runs each on its own store in this run, side by side);
// --refiner none|use-lite sets MNEMO_REFINER (decision 0045; default: USE-lite beside the static table);
// --postgres-only skips the SQLite rows; --rows proxy,context,... picks rows (direct, proxy, resend, context, hybrid, add, batch, health);
// --serve-args '--workers 2' adds arguments to `mnemo serve`; --drain-seconds (default 180) bounds the wait for the backlog; --cpu-prof DIR writes V8 CPU profiles of
// serve (and its workers) there, read them with bench/cpu-profile-summary.ts; --save-db FILE copies the SQLite store as the load
// left it (for bench/drain.ts).
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startScriptedOpenAiServer } from '@mnemo/models/testing';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startServe, type ServeProcess } from './start-serve.js';

const resultsPath = fileURLToPath(new URL('./results/serve.json', import.meta.url));
const defaultCli = fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url));
const replyContent = 'LARCH-RIDGE was heard 2 min ago, 3 hops; SNR -4 dB to the gateway: workable.';
const system = { role: 'system', content: 'You are a mesh-radio bot. Reply in 150 characters or less.' };
const questions = [
  'Is relay LARCH-RIDGE up?',
  'What is the SNR to the gateway?',
  'Should I move the antenna?',
  'Any traffic on channel 3?',
  'Battery at the summit node?',
];
const conversations = 100;
// Linux's USER_HZ, the unit of /proc/<pid>/stat times: 100 on every mainstream architecture.
const clockTicksPerSecond = 100;

interface Measured {
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  readonly non2xx: number;
  /** CPU time (user + system) the `serve` processes spent per completed request, in ms: less noisy than req/s on a shared machine. */
  readonly serveCpuMsPerRequest?: number;
}

interface DrainDetail {
  readonly jobsAtStop: Readonly<Record<string, number>>;
  readonly messagesStored: number;
  readonly unembeddedAtStop: number;
  readonly embeddedDuringDrain: number;
  /** Vectors written per second from the stop until the embed backlog was empty (or the wait ended). */
  readonly embeddingsPerSecond: number;
  /** Messages with a refiner's vector (decision 0045) at the stop and when the wait ended. */
  readonly refinedAtStop: number;
  readonly refinedAtEnd: number;
  /** Seconds after the stop at which each kind had no job pending or running (absent: not within the limit). */
  readonly kindDrainedSeconds: Readonly<Record<string, number>>;
}

interface Row {
  readonly name: string;
  readonly byConnections: Readonly<Record<string, Measured>>;
}

interface StoreReport {
  readonly store: string;
  readonly replicas: number;
  readonly rows: readonly Row[];
  /** Milliseconds /health took right after a 1,000-message append (worst of 5 probes). */
  readonly healthAfterBigAppendMs: number;
  /** What failed around the 1,000-message append: the append itself (then stored in batches of 100) or a /health probe. */
  readonly bigAppendProblem?: string;
  /** Jobs pending or running when the load stopped, and the seconds until none was (null: not within the limit). */
  readonly backlogAtStop: number;
  readonly oldestPendingAgeSecondsAtStop: number;
  readonly drainSeconds: number | null;
  /** The drain in detail (SQLite only: read from the file): jobs per kind at the stop, messages without a vector, embeddings a second, when each kind's backlog emptied. */
  readonly drain?: DrainDetail;
  /** Hybrid contexts of the whole run (proxy and seed) by how they recalled, from /metrics: `hybrid`, `keyword-only/embedding_deadline`, … */
  readonly recall: Readonly<Record<string, number>>;
  /** From SIGTERM to exit, per replica, in ms. */
  readonly stopMs: readonly number[];
}

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '1,10,50' },
    cli: { type: 'string', default: defaultCli },
    'rate-limit-off': { type: 'boolean', default: false },
    'sqlite-only': { type: 'boolean', default: false },
    'postgres-only': { type: 'boolean', default: false },
    embedder: { type: 'string' },
    refiner: { type: 'string' },
    rows: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'serve-args': { type: 'string' },
    'drain-seconds': { type: 'string', default: '180' },
    'save-db': { type: 'string' },
    json: { type: 'boolean', default: false },
    out: { type: 'string', default: resultsPath },
    child: { type: 'string' },
  },
});

if (values.child === 'upstream') {
  const upstream = await startScriptedOpenAiServer({
    replies: [{ content: replyContent, usage: { promptTokens: 40, completionTokens: 20 } }],
    repeatLast: true,
    recordRequests: false,
  });
  process.send?.({ url: upstream.baseUrl });
  process.once('disconnect', () => void upstream.close());
} else {
  await main();
}

async function main(): Promise<void> {
  const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
  const durationSeconds = Number(values.duration);
  const connectionCounts = values.connections.split(',').map(Number);
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-bench-serve-'));
  const upstreamChild = fork(fileURLToPath(import.meta.url), ['--child', 'upstream'], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const upstream = await new Promise<string>((resolvePromise) =>
      upstreamChild.once('message', (message) => resolvePromise((message as { url: string }).url)),
    );
    const reports: StoreReport[] = [];
    // Several embedders (`--embedder use-lite,static`) run one after the other in this run, each on a fresh store, so their rows compare side by side.
    const embedders = values.embedder?.split(',').filter((name) => name !== '') ?? [];
    for (const embedder of embedders.length === 0 ? [undefined] : embedders) {
      const settings = {
        durationSeconds,
        connectionCounts,
        upstream,
        cli: values.cli,
        directory,
        log,
        ...(embedder === undefined ? {} : { embedder }),
      };
      const label = embedder === undefined ? '' : ` (MNEMO_EMBEDDER=${embedder})`;
      if (!values['postgres-only'])
        reports.push(
          await runStore({
            ...settings,
            store: `SQLite file${label}`,
            dbs: [join(directory, `serve-${embedder ?? 'default'}.db`)],
          }),
        );
      await runPostgres(settings, label, reports);
    }
    const report = {
      settings: {
        durationSeconds,
        connectionCounts,
        cli: values.cli,
        embedder: values.embedder ?? 'default (static)',
        refiner: values.refiner ?? 'default (use-lite beside static)',
        conversations,
      },
      stores: reports,
    };
    await mkdir(dirname(values.out), { recursive: true });
    await writeFile(values.out, `${JSON.stringify(report, null, 2)}\n`);
    for (const store of reports) log(`\n${formatStore(store, connectionCounts)}`);
    if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    if (upstreamChild.connected) upstreamChild.disconnect();
    await rm(directory, { recursive: true, force: true });
  }
}

async function runPostgres(
  settings: Omit<RunSettings, 'store' | 'dbs'>,
  label: string,
  reports: StoreReport[],
): Promise<void> {
  {
    const { log } = settings;
    const url = process.env.MNEMO_TEST_DATABASE_URL;
    if (url !== undefined && !values['sqlite-only']) {
      const schema = `bench_serve_${Date.now()}`;
      const db = `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;
      try {
        reports.push(await runStore({ ...settings, store: `PostgreSQL${label}`, dbs: [db, db] }));
      } finally {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      }
    } else log('PostgreSQL skipped: set MNEMO_TEST_DATABASE_URL to add its rows');
  }
}

interface RunSettings {
  readonly store: string;
  readonly dbs: readonly string[];
  readonly durationSeconds: number;
  readonly connectionCounts: readonly number[];
  readonly upstream: string;
  readonly cli: string;
  readonly directory: string;
  readonly log: (line: string) => void;
  /** MNEMO_EMBEDDER of the serve processes; unset: the CLI's default. */
  readonly embedder?: string;
}

async function runStore(settings: RunSettings): Promise<StoreReport> {
  const { log } = settings;
  if (values['rate-limit-off'])
    await writeFile(join(settings.directory, 'mnemo.config.json'), JSON.stringify({ server: { rateLimit: false } }));
  const replicas: Replica[] = [];
  try {
    for (const db of settings.dbs) replicas.push(await startReplica(settings, db));
    const urls = replicas.map((replica) => replica.url);
    log(`${settings.store}: ${replicas.length} mnemo serve at ${urls.join(', ')}`);
    const warm = await Promise.all(urls.map((url) => waitForQueryEmbedder(url)));
    log(`  query embedder ${warm.join(', ')}`);
    const big = await appendBig(urls[0]!, log);
    const healthAfterBigAppendMs = big.healthMs;
    const rows: Row[] = [];
    let turn = 0;
    const history = new Map<string, { role: string; content: string }[]>();
    const allScenarios: {
      id: string;
      name: string;
      path: string;
      direct?: boolean;
      body?: () => string;
      method?: string;
    }[] = [
      {
        id: 'direct',
        name: 'upstream direct',
        path: '/v1/chat/completions',
        direct: true,
        body: () => chatBody(`direct-${turn % conversations}`, [{ role: 'user', content: question(turn++) }]),
      },
      {
        id: 'proxy',
        name: 'proxy, one new turn per request',
        path: '/v1/chat/completions',
        body: () => chatBody(`new-${turn % conversations}`, [{ role: 'user', content: question(turn++) }]),
      },
      {
        id: 'resend',
        name: 'proxy, bot resends its whole history',
        path: '/v1/chat/completions',
        body: () => {
          const user = `resend-${turn % conversations}`;
          const past = history.get(user) ?? [];
          const next = [...past, { role: 'user', content: question(turn++) }];
          history.set(user, [...next, { role: 'assistant', content: replyContent }]);
          return chatBody(user, next);
        },
      },
      {
        id: 'context',
        name: 'seed context, 1,000 messages',
        path: '/v1/memory/context',
        body: () => JSON.stringify({ conversation_id: 'big', max_tokens: 1000 }),
      },
      {
        id: 'hybrid',
        name: 'seed context hybrid, 1,000 messages',
        path: '/v1/memory/context',
        body: () =>
          JSON.stringify({ conversation_id: 'big', max_tokens: 1000, memory_type: 'hybrid', query: question(turn++) }),
      },
      {
        id: 'add',
        name: 'seed add',
        path: '/v1/memory/add',
        body: () =>
          JSON.stringify({ conversation_id: `add-${turn % conversations}`, role: 'user', content: question(turn++) }),
      },
      {
        id: 'batch',
        name: 'resource batch append, 10 messages',
        path: '/v1/conversations/batch-{n}/messages',
        body: () =>
          JSON.stringify({
            messages: Array.from({ length: 10 }, (_, index) => ({
              role: index % 2 === 0 ? 'user' : 'assistant',
              content: `${question(turn + index)} batch ${turn}`,
            })),
          }),
      },
      { id: 'health', name: '/health', path: '/health', method: 'GET' },
    ];
    const chosen = values.rows?.split(',');
    const scenarios =
      chosen === undefined ? allScenarios : allScenarios.filter((scenario) => chosen.includes(scenario.id));
    for (const scenario of scenarios) {
      const byConnections: Record<string, Measured> = {};
      for (const connections of settings.connectionCounts) {
        log(`  ${scenario.name} at ${connections} connections ...`);
        const targets = scenario.direct === true ? [settings.upstream.replace(/\/v1$/, '')] : urls;
        const cpuBefore = replicas.map((replica) => readCpuMs(replica.pid));
        const measured = await measureSpread(targets, scenario, connections, settings.durationSeconds, () => turn++);
        const cpuMs = replicas.reduce((sum, replica, index) => sum + readCpuMs(replica.pid) - cpuBefore[index]!, 0);
        const completed = measured.requestsPerSecond * settings.durationSeconds;
        byConnections[String(connections)] = {
          ...measured,
          ...(Number.isNaN(cpuMs) || completed === 0 ? {} : { serveCpuMsPerRequest: round(cpuMs / completed) }),
        };
      }
      rows.push({ name: scenario.name, byConnections });
    }
    const stop = await readBacklog(urls[0]!);
    const sqliteFile = settings.dbs[0]!.includes('://') ? undefined : settings.dbs[0]!;
    const countsAtStop = sqliteFile === undefined ? undefined : countEmbedded(sqliteFile);
    // The store as the load left it, for bench/drain.ts to drain again and again with other builds.
    if (sqliteFile !== undefined && values['save-db'] !== undefined) await saveDatabase(sqliteFile, values['save-db']);
    log(
      `  load stopped: ${stop.total} jobs pending or running (${formatKinds(stop.byKind)}), oldest pending ${stop.oldestAgeSeconds.toFixed(1)} s${countsAtStop === undefined ? '' : `; ${countsAtStop.messages - countsAtStop.embedded} of ${countsAtStop.messages} messages without a vector`}; waiting for them to drain ...`,
    );
    const waited = await waitForDrain(urls[0]!, Number(values['drain-seconds']));
    const drainSeconds = waited.seconds;
    const drain =
      sqliteFile === undefined || countsAtStop === undefined
        ? undefined
        : drainDetail(stop.byKind, countsAtStop, countEmbedded(sqliteFile), waited);
    const recall = await readRecallCounts(urls);
    const stopMs = await Promise.all(replicas.map((replica) => replica.stop()));
    return {
      store: settings.store,
      replicas: replicas.length,
      rows,
      recall,
      healthAfterBigAppendMs,
      ...(big.problem === undefined ? {} : { bigAppendProblem: big.problem }),
      backlogAtStop: stop.total,
      oldestPendingAgeSecondsAtStop: round(stop.oldestAgeSeconds),
      drainSeconds,
      ...(drain === undefined ? {} : { drain }),
      stopMs,
    };
  } finally {
    for (const replica of replicas) replica.kill();
  }
}

function question(index: number): string {
  return `${questions[index % questions.length]} (#${index})`;
}

function chatBody(user: string, messages: readonly { role: string; content: string }[]): string {
  return JSON.stringify({ model: 'bench-model', user, messages: [system, ...messages] });
}

type Replica = ServeProcess;

function startReplica(settings: RunSettings, db: string): Promise<Replica> {
  const env: Record<string, string> = { MNEMO_LLM_BASE_URL: settings.upstream };
  if (settings.embedder !== undefined) env.MNEMO_EMBEDDER = settings.embedder;
  if (values.refiner !== undefined) env.MNEMO_REFINER = values.refiner;
  const nodeArgs = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`];
  const args = values['serve-args']?.split(' ').filter((argument) => argument !== '') ?? [];
  return startServe({ cli: settings.cli, directory: settings.directory, db, env, args, nodeArgs });
}

/**
 * Waits (at most 60 s) until a hybrid context's query embedding makes its deadline, so that no row
 * measures the query embedder's model still loading in the serve process: `ready after N s`, or why not.
 */
async function waitForQueryEmbedder(url: string): Promise<string> {
  const started = performance.now();
  const body = JSON.stringify({ messages: [{ role: 'user', content: 'Is relay LARCH-RIDGE up?' }] });
  await fetch(`${url}/v1/conversations/warm-up/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  let last = '';
  while (performance.now() - started < 60_000) {
    const response = await fetch(`${url}/v1/conversations/warm-up/context`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ policy: 'hybrid', query: 'which relay is LARCH-RIDGE?' }),
    });
    const recall = ((await response.json()) as { report?: { recall?: { mode: string; reason?: string } } }).report
      ?.recall;
    last =
      recall === undefined
        ? `answered ${response.status} without a recall report`
        : `${recall.mode}${recall.reason === undefined ? '' : `/${recall.reason}`}`;
    if (recall === undefined || recall.mode === 'hybrid' || recall.reason === 'no_embedder') break;
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 250));
  }
  return `${last} after ${round((performance.now() - started) / 1000)} s`;
}

/**
 * Stores a 1,000-message conversation in one append, then times /health right after it (worst of 5). An
 * append that fails (an old build reset the connection) is noted and redone in batches of 100.
 */
async function appendBig(url: string, log: (line: string) => void): Promise<{ healthMs: number; problem?: string }> {
  const messages = Array.from({ length: 1000 }, (_, index) => ({
    role: index % 2 === 0 ? 'user' : 'assistant',
    content: index % 2 === 0 ? question(index) : `${replyContent} (${index})`,
    // The same key in the one-request append and in its retry in batches: nothing is stored twice.
    idempotencyKey: `big-${index}`,
  }));
  const append = async (batch: readonly unknown[]) => {
    const response = await fetch(`${url}/v1/conversations/big/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: batch }),
    });
    if (response.status !== 201) throw new Error(`the append answered ${response.status}: ${await response.text()}`);
  };
  let appendError: string | undefined;
  try {
    await append(messages);
  } catch (error) {
    appendError =
      error instanceof Error
        ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}`
        : String(error);
    log(`  the 1,000-message append failed: ${appendError}; storing it in batches of 100`);
    for (let start = 0; start < messages.length; start += 100) await append(messages.slice(start, start + 100));
  }
  let worst = 0;
  let healthError: string | undefined;
  for (let probe = 0; probe < 5; probe += 1) {
    const started = performance.now();
    try {
      await (await fetch(`${url}/health`)).arrayBuffer();
    } catch (error) {
      // A server blocked past Node's header timeout resets the connection: the probe counts until then.
      healthError ??=
        error instanceof Error
          ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}`
          : String(error);
    }
    worst = Math.max(worst, performance.now() - started);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 100));
  }
  if (healthError !== undefined) log(`  /health failed after the 1,000-message append: ${healthError}`);
  const problems = [
    ...(appendError === undefined ? [] : [`append: ${appendError}`]),
    ...(healthError === undefined ? [] : [`/health: ${healthError}`]),
  ];
  return { healthMs: round(worst), ...(problems.length === 0 ? {} : { problem: problems.join('; ') }) };
}

/** Runs one autocannon per target at once, splitting the connections between them; sums req/s, keeps the worse percentiles. */
async function measureSpread(
  targets: readonly string[],
  scenario: { path: string; body?: () => string; method?: string },
  connections: number,
  durationSeconds: number,
  nextBatch: () => number,
): Promise<Measured> {
  const shares = targets
    .map((_, index) => Math.floor(connections / targets.length) + (index < connections % targets.length ? 1 : 0))
    .filter((share) => share > 0);
  const results = await Promise.all(
    shares.map((share, index) =>
      autocannon({
        url: targets[index]!,
        connections: share,
        duration: durationSeconds,
        requests: [
          {
            setupRequest: (request) => ({
              ...request,
              path: scenario.path.replace('{n}', String(nextBatch() % conversations)),
              method: (scenario.method ?? 'POST') as 'POST',
              headers: { 'content-type': 'application/json' },
              ...(scenario.body === undefined ? {} : { body: scenario.body() }),
            }),
          },
        ],
      }),
    ),
  );
  return {
    requestsPerSecond: Math.round(results.reduce((sum, result) => sum + result.requests.average, 0)),
    p50: Math.max(...results.map((result) => result.latency.p50)),
    p99: Math.max(...results.map((result) => result.latency.p99)),
    errors: results.reduce((sum, result) => sum + result.errors + result.timeouts, 0),
    non2xx: results.reduce((sum, result) => sum + result.non2xx, 0),
  };
}

/** Pending plus running jobs (in all and per kind) and the oldest pending job's age, from /metrics. */
async function readBacklog(
  url: string,
): Promise<{ total: number; byKind: Record<string, number>; oldestAgeSeconds: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  let oldestAgeSeconds = 0;
  const byKind: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const backlog = /^mnemo_job_backlog\{(?:[^}]*kind="(\w+)")?[^}]*\} (\d+)/.exec(line);
    if (backlog !== null) {
      total += Number(backlog[2]);
      if (backlog[1] !== undefined) byKind[backlog[1]] = (byKind[backlog[1]] ?? 0) + Number(backlog[2]);
    }
    const age = /^mnemo_job_oldest_pending_age_seconds ([\d.]+)/.exec(line);
    if (age !== null) oldestAgeSeconds = Number(age[1]);
    // A build without the backlog gauges: pending and running from the status gauge.
    const status = /^mnemo_jobs\{status="(pending|running)"\} (\d+)/.exec(line);
    if (status !== null && !text.includes('mnemo_job_backlog')) total += Number(status[2]);
  }
  return { total, byKind, oldestAgeSeconds };
}

/** The `mnemo_context_recall_total` counters of every replica, summed by `mode/reason` (a hybrid one also by `hybrid@<model>`). */
async function readRecallCounts(urls: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const url of urls) {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const match of text.matchAll(
      /^mnemo_context_recall_total\{mode="([^"]+)",reason="([^"]+)"(?:,model="([^"]+)")?\} (\d+)$/gm,
    )) {
      const key = match[2] === 'none' ? match[1]! : `${match[1]}/${match[2]}`;
      counts[key] = (counts[key] ?? 0) + Number(match[4]);
      if (match[3] !== undefined) counts[`${key}@${match[3]}`] = (counts[`${key}@${match[3]}`] ?? 0) + Number(match[4]);
    }
  }
  return counts;
}

/** Polls the backlog until it is empty (or `limitSeconds` passed): the seconds it took (null: not within the limit) and when each kind emptied. */
async function waitForDrain(
  url: string,
  limitSeconds: number,
): Promise<{ seconds: number | null; kindDrainedSeconds: Record<string, number> }> {
  const started = performance.now();
  const kindDrainedSeconds: Record<string, number> = {};
  while (performance.now() - started < limitSeconds * 1000) {
    const backlog = await readBacklog(url);
    const elapsed = round((performance.now() - started) / 1000);
    for (const [kind, count] of Object.entries(backlog.byKind)) if (count === 0) kindDrainedSeconds[kind] ??= elapsed;
    if (backlog.total === 0) return { seconds: elapsed, kindDrainedSeconds };
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 250));
  }
  return { seconds: null, kindDrainedSeconds };
}

/** An online copy of a SQLite file that the server and its workers go on writing. */
async function saveDatabase(file: string, target: string): Promise<void> {
  const database = new Database(file, { readonly: true, fileMustExist: true });
  try {
    await database.backup(target);
  } finally {
    database.close();
  }
}

/** Messages and stored vectors in a SQLite file (read-only, beside the running server). */
/**
 * Messages, and vectors of the embedder: the model with the most vectors (it embeds every message as it
 * is stored, or by the embed job; a refiner's vectors, decision 0045, come only while the machine is
 * idle, so fewer), and of every other model (`refined`).
 */
function countEmbedded(file: string): { messages: number; embedded: number; refined: number; at: number } {
  const database = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const count = (sql: string) => (database.prepare(sql).get() as { n: number }).n;
    const byModel = (
      database.prepare('SELECT count(*) AS n FROM message_vectors GROUP BY model_id ORDER BY n DESC').all() as {
        n: number;
      }[]
    ).map((row) => row.n);
    return {
      messages: count('SELECT count(*) AS n FROM messages'),
      embedded: byModel[0] ?? 0,
      refined: byModel.slice(1).reduce((sum, n) => sum + n, 0),
      at: performance.now(),
    };
  } finally {
    database.close();
  }
}

function drainDetail(
  jobsAtStop: Record<string, number>,
  atStop: { messages: number; embedded: number; refined: number; at: number },
  atEnd: { messages: number; embedded: number; refined: number; at: number },
  waited: { seconds: number | null; kindDrainedSeconds: Record<string, number> },
): DrainDetail {
  const embeddedDuringDrain = atEnd.embedded - atStop.embedded;
  const embedSeconds = waited.kindDrainedSeconds.embed ?? (atEnd.at - atStop.at) / 1000;
  return {
    jobsAtStop,
    messagesStored: atEnd.messages,
    unembeddedAtStop: atStop.messages - atStop.embedded,
    embeddedDuringDrain,
    embeddingsPerSecond: embedSeconds > 0 ? Math.round(embeddedDuringDrain / embedSeconds) : 0,
    refinedAtStop: atStop.refined,
    refinedAtEnd: atEnd.refined,
    kindDrainedSeconds: waited.kindDrainedSeconds,
  };
}

function formatKinds(byKind: Readonly<Record<string, number>>): string {
  return Object.entries(byKind)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
}

function formatStore(report: StoreReport, connectionCounts: readonly number[]): string {
  const header = [
    'row',
    ...connectionCounts.flatMap((connections) => [
      `c${connections} req/s`,
      `c${connections} p50`,
      `c${connections} p99`,
      `c${connections} cpu ms/req`,
    ]),
    'errors',
  ];
  const cells = report.rows.map((row) => [
    row.name,
    ...connectionCounts.flatMap((connections) => {
      const cell = row.byConnections[String(connections)]!;
      return [
        String(cell.requestsPerSecond),
        String(cell.p50),
        String(cell.p99),
        cell.serveCpuMsPerRequest === undefined ? '–' : cell.serveCpuMsPerRequest.toFixed(2),
      ];
    }),
    String(Object.values(row.byConnections).reduce((sum, cell) => sum + cell.errors + cell.non2xx, 0)),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => row[column]!.length)));
  const line = (cellsOfRow: readonly string[]) =>
    cellsOfRow
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ');
  return [
    `${report.store}, ${report.replicas} replica${report.replicas === 1 ? '' : 's'} (latencies in ms)`,
    line(header),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...cells.map(line),
    `/health right after a 1,000-message append: ${report.healthAfterBigAppendMs} ms (worst of 5)${report.bigAppendProblem === undefined ? '' : `; failed: ${report.bigAppendProblem}`}`,
    `backlog when the load stopped: ${report.backlogAtStop} jobs (oldest pending ${report.oldestPendingAgeSecondsAtStop} s); drained in ${report.drainSeconds === null ? `more than ${values['drain-seconds']}` : report.drainSeconds} s`,
    ...(report.drain === undefined
      ? []
      : [
          `  jobs at the stop: ${formatKinds(report.drain.jobsAtStop)}; ${report.drain.unembeddedAtStop} of ${report.drain.messagesStored} messages without a vector; ${report.drain.embeddedDuringDrain} embedded while draining, ${report.drain.embeddingsPerSecond}/s; refined ${report.drain.refinedAtStop} → ${report.drain.refinedAtEnd}; each kind empty after: ${
            Object.entries(report.drain.kindDrainedSeconds)
              .map(([kind, seconds]) => `${kind} ${seconds} s`)
              .join(', ') || 'none'
          }`,
        ]),
    `hybrid contexts by recall: ${
      Object.entries(report.recall)
        .map(([key, count]) => `${key} ${count}`)
        .join(', ') || 'none counted (an older build)'
    }${formatVectorShare(report.recall)}`,
    `SIGTERM to exit: ${report.stopMs.join(', ')} ms`,
  ].join('\n');
}

/** `; recalled with vectors: N %` of the hybrid contexts that recalled (empty when none did; a turn that asked nothing recalls nothing). */
function formatVectorShare(recall: Readonly<Record<string, number>>): string {
  const total = Object.entries(recall)
    // `hybrid@<model>` splits `hybrid` by the model that ranked: counted once, in `hybrid`.
    .filter(([key]) => !key.startsWith('skipped') && !key.includes('@'))
    .reduce((sum, [, count]) => sum + count, 0);
  return total === 0 ? '' : `; recalled with vectors: ${((100 * (recall.hybrid ?? 0)) / total).toFixed(1)} %`;
}

/**
 * User + system CPU time so far, in ms, of a `serve` process and of its HTTP child processes (its
 * `mnemo worker` children are background work, left out), from /proc; NaN where there is none.
 */
function readCpuMs(pid: number): number {
  try {
    // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const own = ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerSecond;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(' ')
      .filter((child) => child !== '');
    const http = children.filter(
      (child) => !readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').includes('worker'),
    );
    return http.reduce((sum, child) => sum + readCpuMs(Number(child)), own);
  } catch {
    return Number.NaN;
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

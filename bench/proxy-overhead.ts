// Proxy overhead, run by bench/http.ts (npm run bench:http): req/s and latency of POST /v1/chat/completions
// sent straight to a scripted OpenAI-protocol upstream, against the same requests sent through mnemo's
// OpenAI-compatible proxy (createServerApp + mountProxyRoutes on a SQLite store), non-streaming and streaming.
// The upstream and the proxy each run in a child process (this file with --child), autocannon in the parent.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemory } from '@mnemo/core';
import { startScriptedOpenAiServer } from '@mnemo/models/testing';
import { createServerApp, startServer } from '@mnemo/server';
import { mountProxyRoutes } from '@mnemo/server/proxy';
import { createSqliteStore } from '@mnemo/sqlite';
import autocannon from 'autocannon';
import { pino } from 'pino';

export interface ProxyOverheadSettings {
  readonly durationSeconds: number;
  readonly connections: number;
  /** Conversations the proxied requests go to, round-robin (named by the body's `user`). */
  readonly conversations: number;
}

export interface LatencyRow {
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly latencyMs: {
    readonly mean: number;
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  };
  readonly errors: number;
  readonly non2xx: number;
}

export interface ProxyOverheadRow {
  readonly name: string;
  readonly stream: boolean;
  readonly direct: LatencyRow;
  readonly proxy: LatencyRow;
  /** Proxy minus direct, in ms. */
  readonly overheadMs: { readonly mean: number; readonly p50: number; readonly p99: number };
}

export interface ProxyOverheadReport {
  readonly settings: ProxyOverheadSettings & {
    readonly store: string;
    readonly request: string;
    readonly reply: string;
  };
  readonly rows: readonly ProxyOverheadRow[];
  /** Messages the proxy stored over the run (a user turn and the assistant's reply per 2xx proxied request). */
  readonly messagesStored: number;
}

const system = { role: 'system', content: 'You are a mesh-radio bot. Reply in 150 characters or less.' };
const questions = [
  'Is relay LARCH-RIDGE up?',
  'What is the SNR to the gateway?',
  'Should I move the antenna?',
  'Any traffic on channel 3?',
  'Battery at the summit node?',
];
const replyContent = 'LARCH-RIDGE was heard 2 min ago, 3 hops; SNR -4 dB to the gateway: workable.';

/** Runs the four rows (direct and proxied, non-streaming then streaming); `log` gets progress lines. */
export async function runProxyOverhead(
  settings: ProxyOverheadSettings,
  log: (line: string) => void,
): Promise<ProxyOverheadReport> {
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-bench-proxy-'));
  const children: ChildProcess[] = [];
  try {
    const upstream = await startChild(['--child', 'upstream'], children);
    const proxy = await startChild(['--child', 'proxy', join(directory, 'proxy.db'), `${upstream}/v1`], children);
    let turn = 0;
    const body = (stream: boolean) => () => {
      const index = turn++;
      return JSON.stringify({
        model: 'bench-model',
        messages: [system, { role: 'user', content: `${questions[index % questions.length]} (#${index})` }],
        user: `bench-${String(index % settings.conversations).padStart(4, '0')}`,
        ...(stream ? { stream: true } : {}),
      });
    };
    // Short untimed runs first, so JIT warm-up, the tokenizer's first load and SQLite's first pages land in no row.
    await measure(upstream, body(false), 1, settings.connections);
    await measure(proxy, body(false), 1, settings.connections);
    const rows: ProxyOverheadRow[] = [];
    let proxied = 0;
    for (const stream of [false, true]) {
      const name = `POST /v1/chat/completions${stream ? ' stream' : ''}`;
      log(`running ${name} direct for ${settings.durationSeconds} s ...`);
      const direct = await measure(upstream, body(stream), settings.durationSeconds, settings.connections);
      log(`running ${name} through the proxy for ${settings.durationSeconds} s ...`);
      const through = await measure(proxy, body(stream), settings.durationSeconds, settings.connections);
      proxied += through.requests - through.non2xx;
      rows.push({
        name,
        stream,
        direct,
        proxy: through,
        overheadMs: {
          mean: round(through.latencyMs.mean - direct.latencyMs.mean),
          p50: round(through.latencyMs.p50 - direct.latencyMs.p50),
          p99: round(through.latencyMs.p99 - direct.latencyMs.p99),
        },
      });
    }
    return {
      settings: {
        ...settings,
        store: 'SQLite file (WAL), empty at the start, createMemory defaults',
        request: 'a system prompt and one new user turn, conversation named by `user`, round-robin',
        reply: `scripted, ${replyContent.length} characters (streamed one word a chunk)`,
      },
      rows,
      messagesStored: proxied * 2,
    };
  } finally {
    for (const child of children) if (child.connected) child.disconnect();
    await rm(directory, { recursive: true, force: true });
  }
}

export function formatProxyOverheadTable(rows: readonly ProxyOverheadRow[]): string {
  const header = [
    'scenario',
    'direct req/s',
    'proxy req/s',
    'direct p50',
    'proxy p50',
    'direct p99',
    'proxy p99',
    'overhead p50 ms',
    'overhead p99 ms',
    'errors',
  ];
  const cells = rows.map((row) => [
    row.name,
    String(row.direct.requestsPerSecond),
    String(row.proxy.requestsPerSecond),
    String(row.direct.latencyMs.p50),
    String(row.proxy.latencyMs.p50),
    String(row.direct.latencyMs.p99),
    String(row.proxy.latencyMs.p99),
    String(row.overheadMs.p50),
    String(row.overheadMs.p99),
    String(row.direct.errors + row.direct.non2xx + row.proxy.errors + row.proxy.non2xx),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => row[column]!.length)));
  const line = (values: readonly string[]) =>
    values
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)].join('\n');
}

async function startChild(args: readonly string[], children: ChildProcess[]): Promise<string> {
  const child = fork(fileURLToPath(import.meta.url), args, {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  return new Promise<string>((resolvePromise, reject) => {
    child.once('message', (message) => resolvePromise((message as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the ${args[1]} child exited with ${code} before listening`)));
  });
}

async function measure(
  url: string,
  body: () => string,
  durationSeconds: number,
  connections: number,
): Promise<LatencyRow> {
  const result = await autocannon({
    url,
    connections,
    duration: durationSeconds,
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: body(),
        }),
      },
    ],
  });
  return {
    requests: result.requests.total,
    requestsPerSecond: Math.round(result.requests.average),
    latencyMs: {
      mean: round(result.latency.mean),
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Child mode: serve the scripted upstream or the proxy until the parent disconnects; tell the parent the URL. */
async function serveChild(kind: string, args: readonly string[]): Promise<void> {
  if (kind === 'upstream') {
    const upstream = await startScriptedOpenAiServer({
      replies: [{ content: replyContent, usage: { promptTokens: 40, completionTokens: 20 } }],
      repeatLast: true,
      recordRequests: false,
    });
    process.send?.({ url: upstream.baseUrl.replace(/\/v1$/, '') });
    process.once('disconnect', () => void upstream.close());
    return;
  }
  const [db, baseUrl] = args;
  if (kind !== 'proxy' || db === undefined || baseUrl === undefined) throw new Error(`unknown child mode ${kind}`);
  const store = createSqliteStore({ path: db });
  const memory = createMemory({ store });
  const app = createServerApp({
    memory,
    logger: pino({ level: 'silent' }),
    limits: { rateLimit: false },
    llm: { baseUrl, apiKey: 'sk-bench' },
    routes: [mountProxyRoutes],
  });
  const server = await startServer({ app, host: '127.0.0.1', port: 0 });
  process.send?.({ url: server.url });
  process.once('disconnect', () => void server.close().then(() => memory.close()));
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const index = process.argv.indexOf('--child');
  if (index === -1) {
    console.error('run through bench/http.ts: npm run bench:http (-- --proxy-only)');
    process.exit(2);
  }
  await serveChild(process.argv[index + 1] ?? '', process.argv.slice(index + 2));
}

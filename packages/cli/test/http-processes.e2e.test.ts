import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeWithPostgres, dropSchemas, freshSchemaUrl } from './postgres-database.js';
import { isRunning, makeWorkDirectory, startMnemo, type StartedMnemo } from './run-mnemo.js';

// `mnemo serve --http-processes N`: N HTTP processes on one port (node:cluster), state shared through the
// store, the worker processes started once, and one SIGTERM that stops them all.
let work: { path: string; remove: () => Promise<void> };
let children: ChildProcessWithoutNullStreams[] = [];

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children = [];
  await work.remove();
});

interface Listening {
  readonly url: string;
  readonly httpProcesses: number[];
  readonly workers: number[];
}

async function startServe(
  db: string,
  extraArgs: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<{ serve: StartedMnemo; listening: Listening }> {
  const serve = await startMnemo(['serve', '--port', '0', '--db', db, ...extraArgs], {
    cwd: work.path,
    env: { MNEMO_EMBEDDER: 'hashed', ...env },
    // The primary's own `listening` line, the one with the process ids.
    ready: /"httpProcesses":\[/,
  });
  children.push(serve.child);
  return { serve, listening: JSON.parse(serve.ready.input) as Listening };
}

/** One request on a connection of its own (no keep-alive), so the primary hands each to the next HTTP process. */
function send(url: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const outgoing = request(
      `${url}${path}`,
      {
        method: text === undefined ? 'GET' : 'POST',
        agent: false,
        headers: text === undefined ? {} : { 'content-type': 'application/json' },
      },
      (response) => {
        let data = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (data += chunk));
        response.once('end', () => resolve({ status: response.statusCode ?? 0, json: JSON.parse(data) as unknown }));
      },
    );
    outgoing.once('error', reject);
    outgoing.end(text);
  });
}

/** Process ids of the request log lines of one route. */
function answeredBy(output: string, route: string): Set<number> {
  const pids = new Set<number>();
  for (const line of output.split('\n')) {
    if (!line.includes(`"route":"${route}"`)) continue;
    pids.add((JSON.parse(line) as { pid: number }).pid);
  }
  return pids;
}

async function waitFor<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Appends through every HTTP process, reads the context back, and stops the whole server with one SIGTERM. */
async function checkSharedServing(db: string, extraEnv: Record<string, string> = {}): Promise<void> {
  const { serve, listening } = await startServe(db, ['--http-processes', '2', '--workers', '1'], extraEnv);
  // The first line is the one scripts wait for, as with one process; the HTTP processes' lines follow it.
  expect(serve.stdout().split('\n')[0]).toBe(`mnemo listening on ${listening.url}`);
  expect(listening.httpProcesses).toHaveLength(2);
  expect(listening.workers).toHaveLength(1);
  expect([...listening.httpProcesses, ...listening.workers]).not.toContain(serve.child.pid);

  for (let turn = 0; turn < 8; turn += 1) {
    const added = await send(listening.url, '/v1/memory/add', {
      conversation_id: 'node-7',
      role: 'user',
      content: `node 7 reports ${turn + 3} hops to the gateway`,
    });
    expect(added).toMatchObject({ status: 200, json: { seq: turn + 1 } });
  }
  // Whichever process answers, it reads what the other one stored.
  for (let read = 0; read < 4; read += 1) {
    const context = await send(listening.url, '/v1/memory/context', { conversation_id: 'node-7', max_tokens: 1000 });
    expect(context.status).toBe(200);
    expect(JSON.stringify(context.json)).toContain('node 7 reports 10 hops');
  }
  const routes = await waitFor(
    () => answeredBy(serve.stdout(), '/v1/memory/add'),
    (pids) => pids.size === 2,
  );
  expect([...routes].sort()).toEqual([...listening.httpProcesses].sort());
  expect(
    [...answeredBy(serve.stdout(), '/v1/memory/context')].every((pid) => listening.httpProcesses.includes(pid)),
  ).toBe(true);
  // The workers run beside the HTTP processes, started once.
  const workersStarted = () => (serve.stdout().match(/"msg":"worker started"/g) ?? []).length;
  expect(await waitFor(workersStarted, (count) => count >= 1)).toBe(1);

  serve.child.kill('SIGTERM');
  expect(await serve.exited).toBe(0);
  const alive = await waitFor(
    () => [...listening.httpProcesses, ...listening.workers].filter(isRunning),
    (pids) => pids.length === 0,
    5000,
  );
  expect(alive).toEqual([]);
  expect(serve.stdout()).toMatch(/"reason":"stop","msg":"HTTP process shutting down/);
}

describe('mnemo serve --http-processes', () => {
  it('answers from two HTTP processes on one port that share a SQLite file, and stops them and the worker on SIGTERM', async () => {
    await checkSharedServing(join(work.path, 'served.db'));
  });

  it('takes the count from MNEMO_HTTP_PROCESSES, and a single process serves by itself', async () => {
    const fromEnv = await startServe(join(work.path, 'env.db'), ['--workers', '0'], { MNEMO_HTTP_PROCESSES: '2' });
    expect(fromEnv.listening.httpProcesses).toHaveLength(2);
    fromEnv.serve.child.kill('SIGTERM');
    expect(await fromEnv.serve.exited).toBe(0);

    const single = await startMnemo(
      ['serve', '--port', '0', '--db', join(work.path, 'single.db'), '--workers', '0', '--http-processes', '1'],
      {
        cwd: work.path,
        env: { MNEMO_EMBEDDER: 'none' },
        ready: /"msg":"listening"/,
      },
    );
    children.push(single.child);
    expect(single.ready.input).not.toContain('httpProcesses');
    expect(JSON.parse(single.ready.input)).toMatchObject({ workers: [] });
    single.child.kill('SIGTERM');
    expect(await single.exited).toBe(0);
  });
});

describeWithPostgres('mnemo serve --http-processes on PostgreSQL', (url) => {
  const schemas: string[] = [];
  afterAll(async () => dropSchemas(url, schemas));

  it('answers from two HTTP processes that share one PostgreSQL schema, and stops them all on SIGTERM', async () => {
    const fresh = freshSchemaUrl(url);
    schemas.push(fresh.schema);
    await checkSharedServing(fresh.url);
  });
});

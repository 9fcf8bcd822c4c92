import { join } from 'node:path';
import { createSqliteStore } from '@mnemo/sqlite';
import { StaticEmbedder, UseLiteEmbedder } from '@mnemo/models';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkDirectory, startMnemo, type StartedMnemo } from './run-mnemo.js';

// The real `mnemo serve` with its defaults (the static table, USE-lite refining beside it; decision 0045):
// the refine job runs in the worker process while the machine is idle, and a question asked afterwards
// ranks with USE-lite's vectors; while the machine is never idle, only the static table's are there and
// every context still recalls with vectors.

let work: { path: string; remove: () => Promise<void> };
let serve: StartedMnemo | undefined;

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  if (serve !== undefined && serve.child.exitCode === null) {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
  serve = undefined;
  await work.remove();
});

const staticModel = new StaticEmbedder().model;
const useLiteModel = new UseLiteEmbedder().model;
const lines = [
  'The billing service keeps its records in PostgreSQL now.',
  'We hiked the ridge trail on Sunday and saw two hawks.',
  'My sister Ines moved to Lisbon for a job at a bakery.',
  'The relay on the north mast needs a new battery before winter.',
];

async function post(url: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function startDefaults(env: Record<string, string>): Promise<string> {
  serve = await startMnemo(['serve', '--db', 'mnemo.db', '--port', '0'], {
    cwd: work.path,
    env,
    ready: /^mnemo listening on (http:\/\/\S+)$/,
  });
  return serve.ready[1]!;
}

async function tell(url: string, conversation: string): Promise<void> {
  const response = await post(url, `/v1/conversations/${conversation}/messages`, {
    userId: 'maren',
    messages: lines.map((content) => ({ role: 'user', content })),
  });
  expect(response.status).toBe(201);
}

async function recallModel(url: string, conversation: string): Promise<unknown> {
  const response = await post(url, `/v1/conversations/${conversation}/context`, {
    userId: 'maren',
    policy: 'hybrid',
    query: 'Which database sits behind our invoicing?',
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { report: { recall?: unknown } }).report.recall;
}

function vectorsOf(model: string, conversation: string): Promise<number> {
  const store = createSqliteStore({ path: join(work.path, 'mnemo.db'), readonly: true });
  const scope = { tenantId: 'default', userId: 'maren', conversationId: conversation };
  return store
    .listUnembeddedMessages(scope, model, 100)
    .then((missing) => lines.length - missing.length)
    .finally(() => store.close());
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('mnemo serve with its default refiner', () => {
  it('adds USE-lite vectors while the machine is idle, and recall then ranks with them', async () => {
    // Others may keep every core busy and it still counts as idle: the test runs beside other tests.
    const url = await startDefaults({ MNEMO_REFINER_IDLE_SHARE: '1' });
    await tell(url, 'ops');
    // The static table's vectors come with the messages.
    expect(await vectorsOf(staticModel, 'ops')).toBe(lines.length);
    await until(async () => (await vectorsOf(useLiteModel, 'ops')) === lines.length, 60_000);
    // The query embedding may miss the 30 ms deadline on a loaded machine (then the static table ranks):
    // asked again once the refiner's thread is warm, it makes it.
    await until(async () => {
      const recall = (await recallModel(url, 'ops')) as { mode: string; model?: string };
      expect(recall.mode).toBe('hybrid');
      return recall.model === useLiteModel;
    }, 30_000);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(
      new RegExp(`mnemo_context_recall_total\\{mode="hybrid",reason="none",model="${useLiteModel}"\\} \\d+`),
    );
  }, 120_000);

  it('never refines while the machine is busy, and every context still recalls with the static vectors', async () => {
    // 0: the machine never counts as idle, so the refine job only waits.
    const url = await startDefaults({ MNEMO_REFINER_IDLE_SHARE: '0' });
    await tell(url, 'ops');
    expect(await vectorsOf(staticModel, 'ops')).toBe(lines.length);
    const recall = await recallModel(url, 'ops');
    expect(recall).toEqual({ mode: 'hybrid', model: staticModel });
    const stats = await (await fetch(`${url}/metrics`)).text();
    // The embed backlog is empty; the refine job waits.
    expect(stats).toMatch(/mnemo_job_backlog\{kind="embed",state="pending"\} 0/);
    expect(stats).toMatch(/mnemo_job_backlog\{kind="refine",state="pending"\} 1/);
    expect(await vectorsOf(useLiteModel, 'ops')).toBe(0);
  }, 60_000);
});

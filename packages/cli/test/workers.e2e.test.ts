import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createMemory, type Job } from '@mnemo/core';
import { embeddingText } from '@mnemo/core/internals';
import { UseLiteEmbedder } from '@mnemo/models';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '@mnemo/models/testing';
import { createSqliteStore } from '@mnemo/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRunning, makeWorkDirectory, startMnemo, type StartedMnemo } from './run-mnemo.js';

// Background work in `mnemo worker` processes beside (or apart from) `mnemo serve`, all leasing from one
// SQLite file: what issue 11 promises of workers, checked in the store.
let work: { path: string; remove: () => Promise<void> };
let children: ChildProcessWithoutNullStreams[] = [];
let upstream: ScriptedOpenAiServer | undefined;

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children = [];
  await upstream?.close();
  upstream = undefined;
  await work.remove();
});

interface Started extends StartedMnemo {
  /** The first stdout line that matched the ready pattern. */
  readonly line: string;
  readonly output: () => string;
}

/** Runs `mnemo ...args` (hashed embedder) in the work directory and resolves once a stdout line matches `ready`. */
async function startMnemoHere(
  args: readonly string[],
  ready: RegExp,
  env: Record<string, string> = {},
): Promise<Started> {
  const started = await startMnemo(args, { cwd: work.path, env: { MNEMO_EMBEDDER: 'hashed', ...env }, ready });
  children.push(started.child);
  return { ...started, line: started.ready.input, output: started.stdout };
}

/** Reads the store's jobs of one conversation in a short-lived connection of this process. */
async function jobsOf(db: string, conversationId: string): Promise<Job[]> {
  const store = createSqliteStore({ path: db });
  try {
    // A conversation named without a user is its own user.
    return await store.listJobs({ tenantId: 'default', userId: conversationId, conversationId });
  } finally {
    await store.close();
  }
}

/** Polls until `done` holds (every 50 ms, at most `timeoutMs`); returns the last value. */
async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const appendBody = (content: string) => JSON.stringify({ messages: [{ role: 'user', content }] });

describe('mnemo serve --workers', () => {
  it('runs the jobs in its worker processes, replaces one that dies, and stops them with itself on SIGTERM', async () => {
    const db = join(work.path, 'served.db');
    const serve = await startMnemoHere(['serve', '--port', '0', '--db', db, '--workers', '2'], /"msg":"listening"/);
    const { url, workers } = JSON.parse(serve.line) as { url: string; workers: number[] };
    expect(workers).toHaveLength(2);
    expect(workers).not.toContain(serve.child.pid);

    const appended = await fetch(`${url}/v1/conversations/node-7/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: appendBody('Maren moved the relay to Larch Ridge'),
    });
    expect(appended.status).toBe(201);
    const jobs = await waitFor(
      () => jobsOf(db, 'node-7'),
      (list) => list.length > 0 && list.every((job) => job.status === 'done'),
    );
    expect(jobs.map((job) => [job.kind, job.status, job.leaseOwner === undefined])).toEqual(
      expect.arrayContaining([
        ['embed', 'done', true],
        ['extract', 'done', true],
      ]),
    );

    // A worker that dies is replaced.
    const startedPids = () =>
      [...serve.output().matchAll(/"pid":(\d+),[^\n]*"msg":"worker started"/g)].map((match) => Number(match[1]));
    await waitFor(
      async () => startedPids(),
      (pids) => pids.length === 2,
    );
    process.kill(workers[0]!, 'SIGKILL');
    const pids = await waitFor(
      async () => startedPids(),
      (list) => list.length === 3,
    );
    expect(pids).toHaveLength(3);
    expect(serve.output()).toMatch(/"msg":"worker process exited; starting another/);

    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    const alive = await waitFor(
      async () => pids.filter(isRunning),
      (list) => list.length === 0,
      5000,
    );
    expect(alive).toEqual([]);
  });

  it('shares the queue with a second serve on the same SQLite file', async () => {
    const db = join(work.path, 'shared.db');
    // The first serves only: every job it queues must be run by the second one's worker.
    const servingOnly = await startMnemoHere(
      ['serve', '--port', '0', '--db', db, '--workers', '0'],
      /"msg":"listening"/,
    );
    const withWorker = await startMnemoHere(
      ['serve', '--port', '0', '--db', db, '--workers', '1'],
      /"msg":"listening"/,
    );
    const { url } = JSON.parse(servingOnly.line) as { url: string };
    expect((JSON.parse(withWorker.line) as { workers: number[] }).workers).toHaveLength(1);

    for (const content of ['node 7 reports 3 hops', 'node 7 battery at 71 percent']) {
      const response = await fetch(`${url}/v1/conversations/node-7/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: appendBody(content),
      });
      expect(response.status).toBe(201);
    }
    const jobs = await waitFor(
      () => jobsOf(db, 'node-7'),
      (list) => list.length > 0 && list.every((job) => job.status === 'done'),
    );

    expect(jobs.every((job) => job.status === 'done')).toBe(true);
    expect(new Set(jobs.map((job) => job.kind))).toEqual(new Set(['embed', 'extract']));
    servingOnly.child.kill('SIGTERM');
    withWorker.child.kill('SIGTERM');
    expect(await Promise.all([servingOnly.exited, withWorker.exited])).toEqual([0, 0]);
  });
});

describe('mnemo worker', () => {
  it('embeds a backlog with USE-lite on its threads, stops on SIGTERM in the middle of it, and another worker embeds the rest', async () => {
    const db = join(work.path, 'backlog.db');
    const scope = { userId: 'node-7', conversationId: 'node-7' };
    // Never loaded here: it only makes the append queue an embed job of USE-lite's model.
    const memory = createMemory({
      store: createSqliteStore({ path: db }),
      embedder: new UseLiteEmbedder(),
      worker: { autoStart: false },
    });
    const turns = Array.from({ length: 300 }, (_, index) => ({
      role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content:
        index % 7 === 0
          ? `turn ${index}: relay LARCH-RIDGE heard ${index % 5} minutes ago at three hops, SNR ${index % 9} dB, battery ${index % 100} percent`
          : `turn ${index}: ok`,
    }));
    await memory.append(scope, turns);
    await memory.close();
    const model = new UseLiteEmbedder().model;
    const unembedded = async () => {
      const store = createSqliteStore({ path: db });
      try {
        return (await store.listUnembeddedMessages({ tenantId: 'default', ...scope }, model, 1000)).length;
      } finally {
        await store.close();
      }
    };
    const env = { MNEMO_EMBEDDER: 'use-lite' };

    const first = await startMnemoHere(
      ['worker', '--db', db, '--embedding-threads', '2'],
      /"msg":"worker started"/,
      env,
    );
    expect(JSON.parse(first.line)).toMatchObject({ embeddingThreads: 2, embedder: model });
    const left = await waitFor(unembedded, (count) => count < turns.length, 60_000);
    // The forward passes run on the threads: the event loop still answers the signal mid-backlog.
    first.child.kill('SIGTERM');
    expect(await first.exited, first.output()).toBe(0);
    expect(left).toBeLessThan(turns.length);

    const second = await startMnemoHere(
      ['worker', '--db', db, '--embedding-threads', '1'],
      /"msg":"worker started"/,
      env,
    );
    await waitFor(
      async () => (await jobsOf(db, 'node-7')).filter((job) => job.kind === 'embed' && job.status !== 'done').length,
      (count) => count === 0,
      120_000,
    );
    expect(await unembedded(), second.output()).toBe(0);

    // The stored vectors are USE-lite's: a message's own embedding text finds it first.
    const store = createSqliteStore({ path: db });
    try {
      const messages = await store.listMessages({ tenantId: 'default', ...scope }, { afterSeq: 20, limit: 2 });
      const [query] = await new UseLiteEmbedder().embed([embeddingText(messages[1]!, messages[0])]);
      const [hit] = await store.searchVector({ tenantId: 'default', userId: 'node-7' }, model, query!, { k: 1 });
      expect(hit?.message.seq).toBe(messages[1]!.seq);
      expect(hit!.score).toBeGreaterThan(0.999);
    } finally {
      await store.close();
    }
  }, 240_000);

  it('finishes, exactly once, a job whose worker was killed in the middle of it', async () => {
    const db = join(work.path, 'jobs.db');
    // The first summarizer call hangs (the worker is killed while it waits); the second answers.
    upstream = await startScriptedOpenAiServer({
      replies: [
        { delayMs: 600_000 },
        { content: 'Maren keeps relay LARCH-RIDGE on solar power; node 7 routes through it.' },
      ],
    });
    const memory = createMemory({ store: createSqliteStore({ path: db }), worker: { autoStart: false } });
    // Past the default budget's verbatim mark (1,800 tokens), so the append queues a compaction.
    const turns = Array.from({ length: 80 }, (_, index) => ({
      role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content: `turn ${index}: node 7 reports relay LARCH-RIDGE at ${index % 5} hops, battery ${60 + index} percent, SNR ${index % 9} dB near the summit cabin.`,
    }));
    await memory.append({ userId: 'node-7', conversationId: 'node-7' }, turns);
    await memory.close();
    const llm = { MNEMO_LLM_BASE_URL: upstream.baseUrl, MNEMO_LLM_MODEL: 'scripted' };
    const compactJob = async () => (await jobsOf(db, 'node-7')).find((job) => job.kind === 'compact');
    expect(await compactJob()).toMatchObject({ status: 'pending' });

    const doomed = await startMnemoHere(['worker', '--db', db, '--lease-ms', '4000'], /"msg":"worker started"/, llm);
    const leased = await waitFor(compactJob, (job) => job?.status === 'running');
    expect(leased).toMatchObject({ status: 'running', attempts: 1 });
    // Killed while its summarizer call waits on the model, not before it was sent.
    await waitFor(
      async () => upstream?.requests.length ?? 0,
      (count) => count === 1,
    );
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const survivor = await startMnemoHere(['worker', '--db', db, '--lease-ms', '4000'], /"msg":"worker started"/, llm);
    const finished = await waitFor(compactJob, (job) => job?.status === 'done');

    expect(finished, survivor.output()).toMatchObject({ status: 'done', attempts: 2 });
    expect(finished?.leaseOwner).toBeUndefined();
    const check = createMemory({ store: createSqliteStore({ path: db }), worker: { autoStart: false } });
    try {
      const summaries = await check.listSummaries({ userId: 'node-7', conversationId: 'node-7' });
      expect(summaries).toHaveLength(1);
      expect(summaries[0]?.content).toContain('LARCH-RIDGE');
    } finally {
      await check.close();
    }
    expect(upstream.requests.filter((request) => request.path.endsWith('/chat/completions'))).toHaveLength(2);
  });
});

import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemory, type CompactionSettings, type Job, type Memory, type Message, type Scope } from '@mnemo/core';
import { isCompactionDue, readJobBacklog } from '@mnemo/core/internals';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from './sqlite-store.js';

// The workers import the built packages, as another program would; `npm run build` precedes the tests.
const fixtures = fileURLToPath(new URL('../test-fixtures/', import.meta.url));
const builtEntries = ['../dist/index.js', '../../core/dist/index.js'].map((entry) =>
  fileURLToPath(new URL(entry, import.meta.url)),
);
// Generous: Node processes start here, and CI may run other test files beside this one.
const processTestTimeoutMs = 120_000;
// Bounded waits for what other processes do; reaching one is a failure, never a slow pass.
const waitDeadlineMs = 20_000;
const tenantId = 'tenant-compaction';
const userId = 'user-compaction';

interface ChildMessage {
  readonly type: string;
  readonly [field: string]: unknown;
}
interface RanJob {
  readonly id: string;
  readonly conversationId: string;
  readonly attempts: number;
}
interface WorkerReport extends ChildMessage {
  readonly workerId: string;
  readonly ran: RanJob[];
  readonly errors: unknown[];
}
interface Child {
  readonly process: ChildProcess;
  /** Resolves with the first message of this type (also one that arrived earlier); rejects if the child exits first or the deadline passes. */
  message<T extends ChildMessage>(type: string): Promise<T>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];

function startChild(script: string, args: readonly string[]): Child {
  // No inherited execArgv: the test runner's loader flags have no business in a plain Node child.
  const child = fork(join(fixtures, script), args, { execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const received: ChildMessage[] = [];
  const waiters = new Set<() => void>();
  child.on('message', (message: ChildMessage) => {
    received.push(message);
    for (const wake of waiters) wake();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
      for (const wake of waiters) wake();
    });
  });
  const message = <T extends ChildMessage>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => settle(true), waitDeadlineMs);
      const settle = (late = false) => {
        const found = received.find((entry) => entry.type === type);
        const gone = child.exitCode !== null || child.signalCode !== null;
        if (found === undefined && !gone && !late) return;
        clearTimeout(timer);
        waiters.delete(wake);
        if (found !== undefined) resolve(found as T);
        else
          reject(
            new Error(
              `${script} sent no '${type}' message (${gone ? 'it exited' : `${waitDeadlineMs} ms passed`}); got ${JSON.stringify(received)}\n${stderr}`,
            ),
          );
      };
      const wake = () => settle();
      waiters.add(wake);
      settle();
    });
  return { process: child, message, exited };
}

/** Polls `read` until `done` holds for its value; throws with the last value once the deadline passes. */
async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + waitDeadlineMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`gave up waiting for ${what} after ${waitDeadlineMs} ms; last seen ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A conversation of `count` messages, alternating user and assistant, each carrying its own facts. */
function history(conversation: string, count: number, firstIndex = 0) {
  return Array.from({ length: count }, (_, offset) => {
    const index = firstIndex + offset;
    return index % 2 === 0
      ? {
          role: 'user' as const,
          content: `In ${conversation}, node !a${index}f9 reports battery ${40 + (index % 50)}% at relay site ${index} on channel ${index % 8}.`,
        }
      : {
          role: 'assistant' as const,
          content: `Noted for ${conversation}: node !a${index - 1}f9 at site ${index - 1}, battery logged as entry ${index}.`,
        };
  });
}

/** Messages as the invariant compares them: a compaction must leave every one of them exactly as stored. */
function fingerprint(messages: readonly Message[]) {
  return messages.map((message) => ({
    id: message.id,
    seq: message.seq,
    role: message.role,
    content: message.content,
    tokens: message.tokens,
  }));
}

describe('SqliteStore compaction across processes', () => {
  let directory: string;
  let path: string;
  let store: SqliteStore;
  let memory: Memory | undefined;

  beforeAll(() => {
    for (const entry of builtEntries)
      if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` before the tests`);
  });
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'mnemo-sqlite-compaction-'));
    path = join(directory, 'mnemo.db');
  });
  afterEach(async () => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await memory?.close();
    memory = undefined;
    rmSync(directory, { recursive: true, force: true });
  });

  /** Creates and migrates the file, and a memory that only queues jobs: workers run in the children. */
  function openParent(settings: CompactionSettings): Memory {
    store = createSqliteStore({ path });
    memory = createMemory({ store, compaction: { settings }, knowledge: false, worker: { autoStart: false } });
    return memory;
  }

  it(
    'finishes a compaction once in a second process after the first worker is killed -9 mid-summarize',
    async () => {
      // One round and a summary bound far above the folded text: the rescue writes exactly one summary.
      const settings: CompactionSettings = {
        triggerTokens: 400,
        keepRecentTokens: 150,
        keepRecentTurns: 2,
        maxSummaryTokens: 2000,
        maxSourceTokensPerRound: 6000,
        keepFacts: true,
      };
      const memory = openParent(settings);
      const scope: Scope = { tenantId, userId, conversationId: 'kill-9' };
      await memory.append(scope, history('kill-9', 60));
      const before = await store.getConversation(scope);
      const messagesBefore = fingerprint(await store.listMessages(scope));
      expect(before?.totalTokens).toBeGreaterThan(settings.triggerTokens);
      expect(before?.summarizedThroughSeq).toBe(0);
      const [queued, ...more] = await store.listJobs(scope);
      expect(more).toEqual([]);
      expect(queued).toMatchObject({ kind: 'compact', status: 'pending', attempts: 0 });

      const victim = startChild('blocking-compaction-worker.mjs', [path, JSON.stringify(settings)]);
      const entered = await victim.message<ChildMessage & { fromSeq: number; toSeq: number }>('summarizing');
      victim.process.kill('SIGKILL');
      expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' });

      expect(entered.fromSeq).toBe(1);
      expect(await store.listSummaries(scope)).toEqual([]);
      expect((await store.getConversation(scope))?.summarizedThroughSeq).toBe(0);
      expect(await store.listJobs(scope)).toEqual([
        expect.objectContaining({ id: queued!.id, status: 'running', leaseOwner: 'victim', attempts: 1 }),
      ]);

      const rescuer = startChild('compaction-worker.mjs', [path, 'rescuer', JSON.stringify(settings)]);
      await rescuer.message('ready');
      rescuer.process.send({ type: 'go' });
      const [finished] = await waitFor(
        'the rescuer to finish the job',
        () => store.listJobs(scope),
        (jobs) => jobs.every((job) => job.status === 'done' || job.status === 'failed'),
      );
      rescuer.process.send({ type: 'stop' });
      const report = await rescuer.message<WorkerReport>('done');

      expect(finished).toMatchObject({ id: queued!.id, status: 'done', attempts: 2 });
      expect(finished?.leaseOwner).toBeUndefined();
      expect(report.ran).toEqual([{ id: queued!.id, conversationId: 'kill-9', attempts: 2 }]);
      expect(report.errors).toEqual([]);
      const summaries = await store.listSummaries(scope);
      expect(summaries).toHaveLength(1);
      // The rescue folds the range the victim had planned: nothing was appended in between.
      expect(summaries[0]).toMatchObject({
        level: 0,
        fromSeq: 1,
        toSeq: entered.toSeq,
        summarizer: 'extractive@1',
        foldedSummaryIds: [],
      });
      expect(summaries[0]!.content.length).toBeGreaterThan(0);
      expect(await store.getConversation(scope)).toMatchObject({
        messageCount: 60,
        summarizedThroughSeq: entered.toSeq,
      });
      expect(fingerprint(await store.listMessages(scope))).toEqual(messagesBefore);
    },
    processTestTimeoutMs,
  );

  it(
    'runs every job exactly once and writes one summary per range when two processes drain one queue',
    async () => {
      // Several rounds per job (250 source tokens each): every job writes a chain of summaries, and a worker
      // that loses a round's compare-and-set to the other process stops there.
      const settings: CompactionSettings = {
        triggerTokens: 400,
        keepRecentTokens: 150,
        keepRecentTurns: 2,
        maxSummaryTokens: 120,
        maxSourceTokensPerRound: 250,
        keepFacts: true,
      };
      const memory = openParent(settings);
      const scopes = Array.from({ length: 6 }, (_, index): Scope => ({
        tenantId,
        userId,
        conversationId: `c${index}`,
      }));
      const crashed = scopes.filter((_, index) => index % 2 === 0);
      for (const scope of crashed) await memory.append(scope, history(scope.conversationId, 60));
      // A worker that died holding these jobs: their leases are expired, so the children may take them over.
      const leasedAt = new Date().toISOString();
      for (let leased = 0; leased < crashed.length; leased += 1) {
        expect(await store.leaseJob({ workerId: 'crashed', leaseMs: 1, now: leasedAt })).toMatchObject({
          leaseOwner: 'crashed',
          attempts: 1,
        });
      }
      // New appends queue a second job beside each running one: two jobs may now compact one conversation at once.
      for (const scope of crashed) await memory.append(scope, history(scope.conversationId, 1, 60));
      for (const scope of scopes.filter((_, index) => index % 2 === 1))
        await memory.append(scope, history(scope.conversationId, 60));
      const messagesBefore = new Map<string, ReturnType<typeof fingerprint>>();
      const queued = new Map<string, Job>();
      for (const scope of scopes) {
        messagesBefore.set(scope.conversationId, fingerprint(await store.listMessages(scope)));
        for (const job of await store.listJobs(scope)) queued.set(job.id, job);
      }
      expect(queued.size).toBe(9);

      const workers = ['worker-a', 'worker-b'].map((workerId) =>
        startChild('compaction-worker.mjs', [path, workerId, JSON.stringify(settings), '30']),
      );
      await Promise.all(workers.map((worker) => worker.message('ready')));
      for (const worker of workers) worker.process.send({ type: 'go' });
      await waitFor(
        'both workers to drain the queue',
        () => readJobBacklog(store, { tenantId }).then((backlog) => backlog.byStatus),
        (counts) => counts.pending === 0 && counts.running === 0,
      );
      for (const worker of workers) worker.process.send({ type: 'stop' });
      const reports = await Promise.all(workers.map((worker) => worker.message<WorkerReport>('done')));

      expect(reports.flatMap((report) => report.errors)).toEqual([]);
      const ran = reports.flatMap((report) => report.ran.map((job) => job.id));
      expect(ran).toHaveLength(queued.size);
      expect(new Set(ran)).toEqual(new Set(queued.keys()));
      for (const scope of scopes) {
        for (const job of await store.listJobs(scope)) {
          // A job taken over from the crashed worker was leased twice; any other job once.
          expect(job).toMatchObject({ status: 'done', attempts: queued.get(job.id)!.attempts + 1 });
        }
        const summaries = await store.listSummaries(scope);
        const conversation = (await store.getConversation(scope))!;
        expect(summaries.length).toBeGreaterThan(0);
        expect(new Set(summaries.map((summary) => `${summary.level}:${summary.toSeq}`)).size).toBe(summaries.length);
        // One chain: each version folds the one before it, so no two workers wrote on the same base.
        summaries.forEach((summary, index) =>
          expect(summary.foldedSummaryIds).toEqual(index === 0 ? [] : [summaries[index - 1]!.id]),
        );
        expect(conversation.summarizedThroughSeq).toBe(summaries[summaries.length - 1]!.toSeq);
        const backlog = {
          rawMessages: conversation.messageCount - conversation.summarizedThroughSeq,
          rawTokens: conversation.totalTokens - conversation.summarizedTokens,
        };
        expect(isCompactionDue(backlog, settings)).toBe(false);
        expect(fingerprint(await store.listMessages(scope))).toEqual(messagesBefore.get(scope.conversationId));
      }
    },
    processTestTimeoutMs,
  );
});

import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createMemory } from '../engine/create-memory.js';
import type { FactExtractionInput, FactExtractor } from '../facts/fact-extractor.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { MemoryError } from '../errors/memory-error.js';
import { createJobWorker } from './job-worker.js';

const scope = { tenantId: 'default', userId: 'maren', conversationId: 'node-7' };
const runAt = '2020-01-01T00:00:00.000Z';

// Retry, backoff, give-up, stop, the attempt deadline and several workers on one store are cases of the store
// conformance suite (testing/job-worker-conformance.ts), so they run on every store; these need no store of their own.
describe('createJobWorker', () => {
  it('gives every attempt its own signal, so listeners a handler leaves on it do not pile up', async () => {
    const store = new InMemoryStore();
    const signals: AbortSignal[] = [];
    for (let index = 0; index < 20; index += 1)
      await store.enqueueJob({ ...scope, conversationId: `c-${index}` }, { kind: 'embed', runAt, maxAttempts: 1 });
    // Like the openai SDK: one abort listener per call, never removed.
    const worker = createJobWorker({
      store,
      handlers: {
        embed: async (_job, _scope, signal) =>
          void (signals.push(signal), signal.addEventListener('abort', () => undefined)),
      },
    });

    expect(await worker.drain()).toBe(20);

    expect(new Set(signals).size).toBe(20);
    expect(Math.max(...signals.map((signal) => getEventListeners(signal, 'abort').length))).toBe(1);
    await worker.stop();
  });
});

describe('createJobWorker between jobs', () => {
  it('turns the event loop after each job, so a backlog that settles without I/O does not hold off timers and signals', async () => {
    const store = new InMemoryStore();
    for (let index = 0; index < 30; index += 1)
      await store.enqueueJob({ ...scope, conversationId: `c-${index}` }, { kind: 'embed', runAt, maxAttempts: 1 });
    const events: string[] = [];
    const worker = createJobWorker({ store, handlers: { embed: async () => void events.push('job') } });
    setTimeout(() => events.push('timer'), 0);

    expect(await worker.drain()).toBe(30);

    // The in-memory store answers in microtasks: without a turn between jobs the timer fired after all 30.
    expect(events.indexOf('timer')).toBeGreaterThan(-1);
    expect(events.indexOf('timer')).toBeLessThan(events.length - 1);
    await worker.stop();
  });
});

describe('createJobWorker and a lost lease', () => {
  it('goes on when an attempt outlives its lease and another worker finished the job: one warning, no error, the other result stands', async () => {
    const store = new InMemoryStore();
    let clock = Date.parse(runAt);
    const now = () => clock;
    await store.enqueueJob(scope, { kind: 'embed', runAt, maxAttempts: 3 });
    const warnings: string[] = [];
    const errors: unknown[] = [];
    const other = createJobWorker({ store, now, leaseMs: 1000, handlers: { embed: async () => undefined } });
    const slow = createJobWorker({
      store,
      now,
      leaseMs: 1000,
      onWarning: (warning) => warnings.push(warning),
      onError: (error) => errors.push(error),
      handlers: {
        // While this attempt runs, its lease lapses and the other worker leases the job and finishes it.
        embed: async () => {
          clock += 1500;
          expect(await other.drain()).toBe(1);
        },
      },
    });

    expect(await slow.drain()).toBe(1);

    expect(errors).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/lease passed to another worker/);
    const [job] = await store.listJobs(scope);
    expect(job).toMatchObject({ status: 'done', attempts: 2 });
    expect(job!.lastError).toBeUndefined();
  });
});

describe('createMemory worker concurrency', () => {
  it('finishes another conversation’s jobs while one extraction hangs', async () => {
    const store = new InMemoryStore();
    const hanging: FactExtractor = {
      id: 'hangs-on-node-1',
      extract: (input: FactExtractionInput) =>
        input.messages.some((message) => message.content.includes('node 1'))
          ? new Promise(() => undefined)
          : Promise.resolve([]),
    };
    const memory = createMemory({
      store,
      compaction: false,
      knowledge: { factExtractor: hanging, graphExtractor: false },
      worker: { concurrency: 2, pollIntervalMs: 5 },
    });
    await memory.append({ userId: 'maren', conversationId: 'node-1' }, { role: 'user', content: 'status of node 1?' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await memory.append({ userId: 'maren', conversationId: 'node-2' }, { role: 'user', content: 'status of node 2?' });

    const other = { tenantId: 'default', userId: 'maren', conversationId: 'node-2' };
    for (let round = 0; round < 200 && (await store.listJobs(other)).some((job) => job.status !== 'done'); round += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));

    expect((await store.listJobs(other)).map((job) => job.status)).toEqual(['done']);
    expect((await store.listJobs({ ...other, conversationId: 'node-1' })).map((job) => job.status)).toEqual([
      'running',
    ]);
    await memory.close();
  });
});

describe('createJobWorker while the store is unavailable', () => {
  it('writes a finished job again, backing off, until the store takes it, instead of leaving it leased', async () => {
    const store = new InMemoryStore();
    await store.enqueueJob(scope, { kind: 'embed', runAt, maxAttempts: 3 });
    let refusals = 2;
    const completeJob = store.completeJob.bind(store);
    store.completeJob = async (...args: Parameters<typeof store.completeJob>) => {
      if (refusals > 0) {
        refusals -= 1;
        throw new MemoryError('unavailable', 'completing a job failed: the disk holding the database is full');
      }
      return completeJob(...args);
    };
    const errors: unknown[] = [];
    let runs = 0;
    const worker = createJobWorker({
      store,
      pollIntervalMs: 1,
      onError: (error) => errors.push(error),
      handlers: { embed: async () => void (runs += 1) },
    });

    expect(await worker.drain()).toBe(1);

    expect(runs).toBe(1);
    expect(errors.map((error) => (error as MemoryError).code)).toEqual(['unavailable', 'unavailable']);
    expect((await store.listJobs(scope)).map((job) => [job.status, job.attempts])).toEqual([['done', 1]]);
    await worker.stop();
  });
});

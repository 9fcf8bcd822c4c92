import { describe, expect, it } from 'vitest';
import { MemoryError } from '../errors/memory-error.js';
import type { Job } from '../jobs/job.js';
import { createJobWorker, type JobHandler, type JobWorkerOptions } from '../jobs/job-worker.js';
import type { Store } from '../store/store.js';
import { at, scopeA } from './conformance-fixtures.js';

/** A clock the test moves by hand: the worker's `now`, so backoff and lease times are exact. */
function fakeClock(offsetMs = 0) {
  let time = Date.parse(at(offsetMs));
  return { now: () => time, set: (ms: number) => void (time = Date.parse(at(ms))) };
}

/** A handler that rejects with its signal's reason once aborted, and says when it started. */
function honoursAbort() {
  const signals: AbortSignal[] = [];
  let started: () => void = () => undefined;
  const running = new Promise<void>((resolve) => (started = resolve));
  const handler: JobHandler = (_job, _scope, signal) =>
    new Promise<void>((_resolve, reject) => {
      signals.push(signal);
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      started();
    });
  return { handler, signals, running };
}

/**
 * The job worker on a real store: retry with backoff, give-up, stop, the attempt deadline, several workers on one
 * store. The worker's clock is fake, so each retry time is asserted exactly; only the deadline case waits (20 ms).
 */
export function describeJobWorkerConformance(store: () => Store): void {
  const worker = (options: Omit<JobWorkerOptions, 'store'>) => createJobWorker({ store: store(), ...options });
  const onlyJob = async (): Promise<Job> => {
    const jobs = await store().listJobs(scopeA);
    expect(jobs).toHaveLength(1);
    return jobs[0]!;
  };

  describe('job worker', () => {
    it('retries a failing job after retryBaseMs · 2^(attempt-1), not earlier, and gives it up after maxAttempts with the last error', async () => {
      await store().enqueueJob(scopeA, { kind: 'embed', runAt: at(0), maxAttempts: 3 });
      const clock = fakeClock();
      const errors: [unknown, string | undefined][] = [];
      let calls = 0;
      const embed: JobHandler = async () => {
        calls += 1;
        throw new MemoryError('model_failed', `embedder down (call ${calls})`);
      };
      const loop = worker({
        handlers: { embed },
        retryBaseMs: 1000,
        now: clock.now,
        onError: (error, job) => errors.push([error, job?.id]),
      });

      expect(await loop.drain()).toBe(1);
      expect(await onlyJob()).toMatchObject({
        status: 'pending',
        attempts: 1,
        runAt: at(1000),
        lastError: 'embedder down (call 1)',
      });
      clock.set(999);
      expect(await loop.drain()).toBe(0);
      clock.set(1000);
      expect(await loop.drain()).toBe(1);
      expect(await onlyJob()).toMatchObject({
        status: 'pending',
        attempts: 2,
        runAt: at(3000),
        lastError: 'embedder down (call 2)',
      });
      clock.set(2999);
      expect(await loop.drain()).toBe(0);
      clock.set(3000);
      expect(await loop.drain()).toBe(1);

      const failed = await onlyJob();
      expect(failed).toMatchObject({ status: 'failed', attempts: 3, lastError: 'embedder down (call 3)' });
      expect(failed.leaseOwner).toBeUndefined();
      clock.set(3_600_000);
      expect(await loop.drain()).toBe(0);
      expect(calls).toBe(3);
      expect(errors).toEqual(
        [1, 2, 3].map((call) => [
          expect.objectContaining({ code: 'model_failed', message: `embedder down (call ${call})` }) as unknown,
          failed.id,
        ]),
      );
      await loop.stop();
    });

    it('waits at most five minutes before a retry however many attempts failed', async () => {
      await store().enqueueJob(scopeA, { kind: 'embed', runAt: at(0), maxAttempts: 4 });
      const clock = fakeClock();
      const loop = worker({
        handlers: { embed: () => Promise.reject(new Error('down')) },
        retryBaseMs: 200_000,
        now: clock.now,
      });

      await loop.drain();
      expect((await onlyJob()).runAt).toBe(at(200_000));
      clock.set(200_000);
      await loop.drain();
      // 400,000 ms by the formula, capped at 300,000.
      expect((await onlyJob()).runAt).toBe(at(500_000));
      await loop.stop();
    });

    it('gives a job up on its first attempt when the handler rejects its input as invalid_input', async () => {
      await store().enqueueJob(scopeA, { kind: 'extract', runAt: at(0), maxAttempts: 5 });
      const clock = fakeClock();
      const loop = worker({
        handlers: { extract: () => Promise.reject(new MemoryError('invalid_input', 'message 3 is not text')) },
        now: clock.now,
      });

      expect(await loop.drain()).toBe(1);
      clock.set(3_600_000);
      expect(await loop.drain()).toBe(0);
      expect(await onlyJob()).toMatchObject({ status: 'failed', attempts: 1, lastError: 'message 3 is not text' });
      await loop.stop();
    });

    it('finishes a job done, and done with its warning as lastError when the handler degraded', async () => {
      const other = { ...scopeA, conversationId: 'conv-2' };
      await store().enqueueJob(scopeA, { kind: 'compact', runAt: at(0), maxAttempts: 3 });
      await store().enqueueJob(other, { kind: 'compact', runAt: at(0), maxAttempts: 3 });
      const warnings: [string, string][] = [];
      const compact: JobHandler = async (_job, scope) =>
        scope.conversationId === other.conversationId
          ? { warning: 'summarizer fell back: model timed out' }
          : undefined;
      const loop = worker({
        handlers: { compact },
        now: fakeClock().now,
        onWarning: (warning, job) => warnings.push([warning, job.conversationId]),
      });

      expect(await loop.drain()).toBe(2);

      const clean = await onlyJob();
      expect(clean).toMatchObject({ status: 'done', attempts: 1 });
      expect(clean.lastError).toBeUndefined();
      expect((await store().listJobs(other))[0]).toMatchObject({
        status: 'done',
        attempts: 1,
        lastError: 'summarizer fell back: model timed out',
      });
      expect(warnings).toEqual([['summarizer fell back: model timed out', 'conv-2']]);
      await loop.stop();
    });

    it('fails an attempt that passes attemptTimeoutMs, aborting its signal, and queues the retry when the handler ignores the signal', async () => {
      await store().enqueueJob(scopeA, { kind: 'embed', runAt: at(0), maxAttempts: 3 });
      const signals: AbortSignal[] = [];
      const errors: unknown[] = [];
      const embed: JobHandler = (_job, _scope, signal) => (signals.push(signal), new Promise<void>(() => undefined));
      const loop = worker({
        handlers: { embed },
        attemptTimeoutMs: 20,
        retryBaseMs: 1000,
        now: fakeClock().now,
        onError: (error) => errors.push(error),
      });

      expect(await loop.drain()).toBe(1);

      expect(await onlyJob()).toMatchObject({
        status: 'pending',
        attempts: 1,
        runAt: at(1000),
        lastError: expect.stringContaining('20 ms deadline') as unknown,
      });
      expect(errors).toEqual([expect.objectContaining({ code: 'unavailable' })]);
      expect(signals[0]?.aborted).toBe(true);
      expect(signals[0]?.reason).toBe(errors[0]);
      await loop.stop();
    });

    it('works a backlog larger than one attempt through in attempts that each succeed: a handler out of room ends its job and one is queued for the rest', async () => {
      await store().enqueueJob(scopeA, { kind: 'embed', runAt: at(0), maxAttempts: 2 });
      const clock = fakeClock();
      let time = 0;
      let left = 7;
      const roundsPerAttempt: number[] = [];
      // Seven rounds of 400 ms; an attempt has 1,000 ms: the second round fits (0 + 0 ≤ 1,000, then 400 + 1.5 · 400 ≤ 1,000), a third would not.
      const embed: JobHandler = async (_job, _scope, _signal, slice) => {
        let rounds = 0;
        while (left > 0 && slice.roomForRound()) {
          time += 400;
          clock.set(time);
          left -= 1;
          rounds += 1;
        }
        roundsPerAttempt.push(rounds);
      };
      const loop = worker({ handlers: { embed }, attemptTimeoutMs: 1000, now: clock.now });

      expect(await loop.drain()).toBe(4);

      expect(roundsPerAttempt).toEqual([2, 2, 2, 1]);
      expect(left).toBe(0);
      const jobs = await store().listJobs(scopeA);
      expect(
        jobs.map(({ kind, status, attempts, maxAttempts, lastError }) => ({
          kind,
          status,
          attempts,
          maxAttempts,
          lastError,
        })),
      ).toEqual(
        Array.from({ length: 4 }, () => ({
          kind: 'embed',
          status: 'done',
          attempts: 1,
          maxAttempts: 2,
          lastError: undefined,
        })),
      );
      await loop.stop();
    });

    it('leases nothing once stopped, neither by drain nor by start', async () => {
      await store().enqueueJob(scopeA, { kind: 'embed', runAt: at(0), maxAttempts: 3 });
      let calls = 0;
      const loop = worker({ handlers: { embed: async () => void (calls += 1) }, now: fakeClock().now });

      await loop.stop();
      expect(await loop.drain()).toBe(0);
      loop.start();
      loop.nudge();
      await loop.stop();

      expect(calls).toBe(0);
      expect(await onlyJob()).toMatchObject({ status: 'pending', attempts: 0 });
    });

    it('aborts the running attempt on stop without failing it, and another worker runs the job once its lease lapses', async () => {
      await store().enqueueJob(scopeA, { kind: 'embed', runAt: at(0), maxAttempts: 3 });
      const clock = fakeClock();
      const errors: unknown[] = [];
      const hanging = honoursAbort();
      const first = worker({
        workerId: 'first',
        handlers: { embed: hanging.handler },
        leaseMs: 60_000,
        now: clock.now,
        onError: (error) => errors.push(error),
      });
      const draining = first.drain();
      await hanging.running;

      await first.stop();
      expect(await draining).toBe(1);

      expect(hanging.signals[0]?.aborted).toBe(true);
      expect(errors).toEqual([]);
      const held = await onlyJob();
      expect(held).toMatchObject({ status: 'running', attempts: 1, leaseOwner: 'first', leaseExpiresAt: at(60_000) });
      expect(held.lastError).toBeUndefined();

      let calls = 0;
      const second = worker({
        workerId: 'second',
        handlers: { embed: async () => void (calls += 1) },
        leaseMs: 60_000,
        now: clock.now,
      });
      clock.set(59_999);
      expect(await second.drain()).toBe(0);
      clock.set(60_000);
      expect(await second.drain()).toBe(1);
      expect(calls).toBe(1);
      expect(await onlyJob()).toMatchObject({ status: 'done', attempts: 2 });
      await second.stop();
    });

    it('stops without waiting for a handler that ignores its signal and never settles, leaving its lease to lapse', async () => {
      await store().enqueueJob(scopeA, { kind: 'embed', runAt: at(0), maxAttempts: 3 });
      let started: () => void = () => undefined;
      const running = new Promise<void>((resolve) => (started = resolve));
      const loop = worker({
        handlers: { embed: () => (started(), new Promise<void>(() => undefined)) },
        pollIntervalMs: 5,
        now: fakeClock().now,
      });
      loop.start();
      await running;

      await loop.stop();

      expect(await onlyJob()).toMatchObject({ status: 'running', attempts: 1, leaseExpiresAt: at(60_000) });
    });

    it('runs each job exactly once, in one worker at a time, when two workers share the store', async () => {
      const scopes = ['conv-1', 'conv-2', 'conv-3'].map((conversationId) => ({ ...scopeA, conversationId }));
      for (const scope of scopes) await store().enqueueJob(scope, { kind: 'extract', runAt: at(0), maxAttempts: 3 });
      const runs: [string, string][] = [];
      let bothRunning: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (bothRunning = resolve));
      // The first two attempts wait for each other: the test ends only if both workers hold a job at once.
      const handlerOf =
        (workerId: string): JobHandler =>
        async (job) => {
          runs.push([workerId, job.id]);
          if (runs.length === 2) bothRunning();
          await gate;
        };
      const clock = fakeClock();
      const workers = ['a', 'b'].map((workerId) =>
        worker({ workerId, handlers: { extract: handlerOf(workerId) }, now: clock.now }),
      );

      const counts = await Promise.all(workers.map((loop) => loop.drain()));

      expect(counts[0]! + counts[1]!).toBe(3);
      expect(new Set(runs.slice(0, 2).map(([workerId]) => workerId))).toEqual(new Set(['a', 'b']));
      expect(new Set(runs.map(([, jobId]) => jobId)).size).toBe(3);
      for (const scope of scopes)
        expect((await store().listJobs(scope)).map((job) => [job.status, job.attempts])).toEqual([['done', 1]]);
      await Promise.all(workers.map((loop) => loop.stop()));
    });
  });
}

import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import { readJobBacklog } from '../jobs/job.js';
import type { Store } from '../store/store.js';
import { at, makeNewMessage, scopeA } from './conformance-fixtures.js';

const request = { kind: 'compact' as const, runAt: at(0), maxAttempts: 3 };

/** Job-queue cases of the store conformance suite: dedup, leases, expiry, retry, give-up, isolation of erase. */
export function describeJobConformance(store: () => Store): void {
  describe('jobs', () => {
    it('absorbs a request into the pending job of the same conversation and kind', async () => {
      const first = await store().enqueueJob(scopeA, request);
      const again = await store().enqueueJob(scopeA, request);
      const other = await store().enqueueJob({ ...scopeA, conversationId: 'conv-2' }, request);
      expect(again.id).toBe(first.id);
      expect(other.id).not.toBe(first.id);
      expect(first).toMatchObject({ ...scopeA, kind: 'compact', status: 'pending', attempts: 0, maxAttempts: 3 });
      expect((await readJobBacklog(store(), {})).byStatus).toMatchObject({ pending: 2, running: 0 });
    });

    it('leases a due job to one worker at a time and lets it complete', async () => {
      const job = await store().enqueueJob(scopeA, request);
      const leased = await store().leaseJob({ workerId: 'w1', leaseMs: 1000, now: at(10) });
      expect(leased).toMatchObject({
        id: job.id,
        status: 'running',
        attempts: 1,
        leaseOwner: 'w1',
        leaseExpiresAt: at(1010),
      });
      expect(await store().leaseJob({ workerId: 'w2', leaseMs: 1000, now: at(20) })).toBeUndefined();
      // A new request while it runs queues a second job: the running one may have planned too early.
      const next = await store().enqueueJob(scopeA, request);
      expect(next.id).not.toBe(job.id);
      await store().completeJob(leased!, at(30), { warning: 'summarizer fell back: model timed out' });
      expect((await store().listJobs(scopeA)).map((item) => item.status)).toEqual(['done', 'pending']);
      expect((await store().listJobs(scopeA))[0]?.lastError).toBe('summarizer fell back: model timed out');
      await expect(store().completeJob(leased!, at(40))).rejects.toSatisfy((error: unknown) =>
        isMemoryError(error, 'conflict'),
      );
    });

    it('does not lease a job before its runAt, nor of kinds the worker does not handle', async () => {
      await store().enqueueJob(scopeA, { ...request, runAt: at(5000) });
      expect(await store().leaseJob({ workerId: 'w1', leaseMs: 1000, now: at(0) })).toBeUndefined();
      expect(await store().leaseJob({ workerId: 'w1', leaseMs: 1000, now: at(6000), kinds: [] })).toBeUndefined();
      expect(
        await store().leaseJob({ workerId: 'w1', leaseMs: 1000, now: at(6000), kinds: ['compact'] }),
      ).toBeDefined();
    });

    it('hands a job whose lease expired to another worker, and refuses the first worker afterwards', async () => {
      await store().enqueueJob(scopeA, request);
      const first = await store().leaseJob({ workerId: 'dead', leaseMs: 1000, now: at(0) });
      const second = await store().leaseJob({ workerId: 'alive', leaseMs: 1000, now: at(1001) });
      expect(second).toMatchObject({ id: first!.id, leaseOwner: 'alive', attempts: 2 });
      await expect(store().completeJob(first!, at(1002))).rejects.toSatisfy((error: unknown) =>
        isMemoryError(error, 'conflict'),
      );
      await store().completeJob(second!, at(1003));
    });

    it('retries a failed attempt at its retry time and gives up after the last attempt', async () => {
      await store().enqueueJob(scopeA, { ...request, maxAttempts: 2 });
      const first = await store().leaseJob({ workerId: 'w', leaseMs: 1000, now: at(0) });
      const retrying = await store().failJob(first!, { error: 'model timed out', now: at(10), retryAt: at(500) });
      expect(retrying).toMatchObject({ status: 'pending', lastError: 'model timed out', runAt: at(500) });
      expect(retrying.leaseOwner).toBeUndefined();
      expect(await store().leaseJob({ workerId: 'w', leaseMs: 1000, now: at(100) })).toBeUndefined();
      const second = await store().leaseJob({ workerId: 'w', leaseMs: 1000, now: at(600) });
      const failed = await store().failJob(second!, { error: 'still broken', now: at(700) });
      expect(failed).toMatchObject({ status: 'failed', attempts: 2, lastError: 'still broken' });
      expect((await readJobBacklog(store(), { tenantId: scopeA.tenantId })).byStatus).toEqual({
        pending: 0,
        running: 0,
        done: 0,
        failed: 1,
      });
    });

    it('gives up a job whose lease expired on its last attempt instead of leasing it again', async () => {
      await store().enqueueJob(scopeA, { ...request, maxAttempts: 1 });
      await store().leaseJob({ workerId: 'crashy', leaseMs: 1000, now: at(0) });
      expect(await store().leaseJob({ workerId: 'w', leaseMs: 1000, now: at(2000) })).toBeUndefined();
      expect((await store().listJobs(scopeA))[0]).toMatchObject({
        status: 'failed',
        lastError: expect.stringContaining('lease expired') as unknown,
      });
    });

    it('reports the backlog per kind and the oldest pending job, per tenant, leaving finished jobs out', async () => {
      const first = await store().enqueueJob(scopeA, { ...request, kind: 'embed' });
      await store().enqueueJob({ ...scopeA, conversationId: 'conv-2' }, { ...request, kind: 'embed' });
      await store().enqueueJob(scopeA, { ...request, kind: 'extract' });
      await store().enqueueJob({ ...scopeA, conversationId: 'conv-3' }, { ...request, kind: 'compact' });
      await store().enqueueJob({ ...scopeA, tenantId: 'tenant-b' }, { ...request, kind: 'embed' });
      const extract = await store().leaseJob({ workerId: 'w', leaseMs: 1000, now: at(0), kinds: ['extract'] });
      const compact = await store().leaseJob({ workerId: 'w', leaseMs: 1000, now: at(0), kinds: ['compact'] });
      await store().completeJob(compact!, at(1));

      const backlog = await readJobBacklog(store(), { tenantId: scopeA.tenantId });
      expect(backlog.byKind).toEqual({
        compact: { pending: 0, running: 0 },
        embed: { pending: 2, running: 0 },
        extract: { pending: 0, running: 1 },
        refine: { pending: 0, running: 0 },
      });
      expect(backlog.oldestPendingCreatedAt).toBe(first.createdAt);
      expect(extract).toBeDefined();
      expect((await readJobBacklog(store(), { tenantId: 'tenant-b' })).byKind.embed).toEqual({
        pending: 1,
        running: 0,
      });
      expect((await readJobBacklog(store(), {})).byKind.embed).toEqual({ pending: 3, running: 0 });
      expect(backlog.byStatus).toEqual({ pending: 2, running: 1, done: 1, failed: 0 });
      expect(await readJobBacklog(store(), { tenantId: 'tenant-none' })).toEqual({
        byKind: {
          compact: { pending: 0, running: 0 },
          embed: { pending: 0, running: 0 },
          extract: { pending: 0, running: 0 },
          refine: { pending: 0, running: 0 },
        },
        byStatus: { pending: 0, running: 0, done: 0, failed: 0 },
      });
    });

    it('counts per tenant and erases jobs with their conversation', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('x')]);
      await store().enqueueJob(scopeA, request);
      await store().enqueueJob({ ...scopeA, tenantId: 'tenant-b' }, request);
      expect((await readJobBacklog(store(), { tenantId: 'tenant-b' })).byStatus.pending).toBe(1);
      await store().deleteConversation(scopeA);
      expect(await store().listJobs(scopeA)).toEqual([]);
      expect((await readJobBacklog(store(), {})).byStatus.pending).toBe(1);
    });
  });
}

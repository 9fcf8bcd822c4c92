import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import type { Store } from '../store/store.js';
import { at, makeNewMessage, scopeA } from './conformance-fixtures.js';

const compact = { kind: 'compact' as const, runAt: at(0), maxAttempts: 1 };

/** Reads the inspector needs: conversation search, the usage ledger entry by entry, jobs by kind and recent failures. */
export function describeInspectionConformance(store: () => Store): void {
  describe('inspection reads', () => {
    it('finds conversations whose user or conversation id contains the search text, ignoring ASCII case', async () => {
      for (const [userId, conversationId] of [
        ['Alice', 'trip-Plans'],
        ['bob', 'radio'],
        ['carol', 'PLANS_b'],
        ['dave', '100%_sure'],
      ]) {
        await store().appendMessages({ tenantId: scopeA.tenantId, userId: userId!, conversationId: conversationId! }, [
          makeNewMessage('x'),
        ]);
      }
      await store().appendMessages({ tenantId: 'tenant-b', userId: 'alice', conversationId: 'plans' }, [
        makeNewMessage('x'),
      ]);
      const ids = async (search: string, userId?: string) =>
        (
          await store().listConversations({
            tenantId: scopeA.tenantId,
            search,
            ...(userId === undefined ? {} : { userId }),
          })
        ).items.map((c) => c.conversationId);
      expect(await ids('plans')).toEqual(['trip-Plans', 'PLANS_b']);
      expect(await ids('ALI')).toEqual(['trip-Plans']);
      expect(await ids('plans', 'carol')).toEqual(['PLANS_b']);
      // Wildcards of LIKE are plain text here.
      expect(await ids('%_')).toEqual(['100%_sure']);
      expect(await ids('_')).toEqual(['PLANS_b', '100%_sure']);
      expect(await ids('nobody')).toEqual([]);
      const paged = await store().listConversations({ tenantId: scopeA.tenantId, search: 'a' }, { limit: 1 });
      expect(paged.items.map((c) => c.userId)).toEqual(['Alice']);
      const rest = await store().listConversations(
        { tenantId: scopeA.tenantId, search: 'a' },
        { cursor: paged.nextCursor!, limit: 10 },
      );
      expect(rest.items.map((c) => c.userId)).toEqual(['bob', 'carol', 'dave']);
    });

    it('lists the usage ledger of a conversation entry by entry, in order, cursor-paged', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('hello')]);
      const other = { ...scopeA, conversationId: 'conv-2' };
      await store().appendMessages(other, [makeNewMessage('x')]);
      await store().insertUsage(other, {
        kind: 'context',
        policy: 'full',
        sentTokens: 1,
        fullHistoryTokens: 1,
        createdAt: at(0),
      });
      for (let index = 0; index < 5; index += 1) {
        await store().insertUsage(scopeA, {
          kind: 'context',
          policy: 'hybrid',
          sentTokens: 10 + index,
          fullHistoryTokens: 100 + index,
          createdAt: at(index * 1000),
        });
      }
      await store().insertUsage(scopeA, {
        kind: 'summarize',
        policy: 'extractive@1',
        sentTokens: 0,
        fullHistoryTokens: 0,
        inputTokens: 70,
        outputTokens: 7,
        createdAt: at(9000),
      });
      const first = await store().listUsage(scopeA, { limit: 4 });
      expect(first.items.map((entry) => entry.sentTokens)).toEqual([10, 11, 12, 13]);
      expect(first.items[0]).toMatchObject({
        kind: 'context',
        policy: 'hybrid',
        fullHistoryTokens: 100,
        inputTokens: 0,
        outputTokens: 0,
        createdAt: at(0),
      });
      const positions = first.items.map((entry) => entry.position);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      const second = await store().listUsage(scopeA, { cursor: first.nextCursor!, limit: 4 });
      expect(second.nextCursor).toBeUndefined();
      expect(second.items.map((entry) => entry.kind)).toEqual(['context', 'summarize']);
      expect(second.items[1]).toMatchObject({
        policy: 'extractive@1',
        inputTokens: 70,
        outputTokens: 7,
        createdAt: at(9000),
      });
      expect((await store().listUsage({ ...scopeA, tenantId: 'tenant-b' })).items).toEqual([]);
      expect((await store().listUsage({ ...scopeA, conversationId: 'none' })).items).toEqual([]);
      await expect(store().listUsage(scopeA, { cursor: 'not-a-cursor' })).rejects.toSatisfy((error: unknown) =>
        isMemoryError(error, 'invalid_input'),
      );
    });

    it('counts jobs by kind and status per tenant and lists the newest failures with their errors', async () => {
      await store().enqueueJob(scopeA, compact);
      await store().enqueueJob(scopeA, { ...compact, kind: 'embed' });
      await store().enqueueJob({ ...scopeA, conversationId: 'conv-2' }, compact);
      await store().enqueueJob({ ...scopeA, tenantId: 'tenant-b' }, { ...compact, kind: 'extract' });
      const byKind = await store().countJobsByKind({ tenantId: scopeA.tenantId });
      expect(byKind.map(({ kind, status, count }) => ({ kind, status, count }))).toEqual([
        { kind: 'compact', status: 'pending', count: 2 },
        { kind: 'embed', status: 'pending', count: 1 },
      ]);
      expect(Number.isNaN(Date.parse(byKind[0]!.oldestCreatedAt))).toBe(false);
      expect((await store().countJobsByKind({})).map((row) => row.kind)).toEqual(['compact', 'embed', 'extract']);

      const first = await store().leaseJob({ workerId: 'w', leaseMs: 1000, now: at(10), kinds: ['compact'] });
      await store().failJob(first!, { error: 'summarizer timed out', now: at(20) });
      const second = await store().leaseJob({ workerId: 'w', leaseMs: 1000, now: at(30), kinds: ['compact'] });
      await store().failJob(second!, { error: 'model refused', now: at(40), retryAt: at(5000) });
      const embed = await store().leaseJob({ workerId: 'w', leaseMs: 1000, now: at(50), kinds: ['embed'] });
      await store().completeJob(embed!, at(60));
      const failures = await store().listFailedJobs({ tenantId: scopeA.tenantId, limit: 10 });
      expect(failures.map((job) => [job.status, job.lastError])).toEqual([
        ['pending', 'model refused'],
        ['failed', 'summarizer timed out'],
      ]);
      expect(
        (await store().listFailedJobs({ tenantId: scopeA.tenantId, limit: 1 })).map((job) => job.lastError),
      ).toEqual(['model refused']);
      expect(await store().listFailedJobs({ tenantId: 'tenant-b', limit: 10 })).toEqual([]);
      const statuses = (await store().countJobsByKind({ tenantId: scopeA.tenantId })).map(
        ({ kind, status, count }) => `${kind}:${status}:${count}`,
      );
      expect(statuses).toEqual(['compact:failed:1', 'compact:pending:1', 'embed:done:1']);
    });
  });
}

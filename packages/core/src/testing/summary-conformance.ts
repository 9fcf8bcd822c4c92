import { describe, expect, it } from 'vitest';
import type { NewSummary } from '../compaction/summary.js';
import { isMemoryError } from '../errors/memory-error.js';
import type { Store } from '../store/store.js';
import { makeNewMessage, scopeA } from './conformance-fixtures.js';

/** A summary input for conformance tests. */
export function makeNewSummary(toSeq: number, overrides: Partial<NewSummary> = {}): NewSummary {
  return {
    level: 0,
    fromSeq: 1,
    toSeq,
    content: `summary through ${toSeq}`,
    tokens: 5,
    foldedSummaryIds: [],
    summarizer: 'test@1',
    inputTokens: 100,
    outputTokens: 5,
    createdAt: new Date().toISOString(),
    ...overrides,
  };
}

/** Summary cases of the store conformance suite: versions, watermark compare-and-set, provenance, isolation. */
export function describeSummaryConformance(store: () => Store): void {
  describe('summaries', () => {
    it('writes a summary with the watermark move and its cost in the ledger', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('aaaa'), makeNewMessage('bb'), makeNewMessage('c')]);
      const summary = await store().insertSummary(scopeA, makeNewSummary(2), { expectedWatermark: 0 });
      expect(summary).toMatchObject({ ...scopeA, level: 0, fromSeq: 1, toSeq: 2, foldedSummaryIds: [] });
      expect(await store().getConversation(scopeA)).toMatchObject({ summarizedThroughSeq: 2, summarizedTokens: 6 });
      expect(await store().getLatestSummary(scopeA)).toEqual(summary);
      expect(await store().getUsageTotals(scopeA)).toMatchObject({
        compactions: 1,
        summarizerInputTokens: 100,
        summarizerOutputTokens: 5,
        requests: 0,
      });
    });

    it('keeps every version in order with provenance and finds one by id only for its own user', async () => {
      await store().appendMessages(scopeA, [
        makeNewMessage('a'),
        makeNewMessage('b'),
        makeNewMessage('c'),
        makeNewMessage('d'),
      ]);
      const first = await store().insertSummary(scopeA, makeNewSummary(2), { expectedWatermark: 0 });
      const second = await store().insertSummary(scopeA, makeNewSummary(4, { foldedSummaryIds: [first.id] }), {
        expectedWatermark: 2,
      });
      const condensed = await store().insertSummary(
        scopeA,
        makeNewSummary(4, { level: 1, foldedSummaryIds: [second.id], fallbackReason: 'timeout' }),
        {
          expectedWatermark: 4,
        },
      );
      expect((await store().listSummaries(scopeA)).map((summary) => summary.id)).toEqual([
        first.id,
        second.id,
        condensed.id,
      ]);
      expect(await store().getLatestSummary(scopeA)).toMatchObject({
        id: condensed.id,
        level: 1,
        foldedSummaryIds: [second.id],
        fallbackReason: 'timeout',
      });
      expect(await store().getSummary({ tenantId: scopeA.tenantId, userId: scopeA.userId }, second.id)).toEqual(second);
      expect(
        await store().getSummary({ tenantId: scopeA.tenantId, userId: 'someone-else' }, second.id),
      ).toBeUndefined();
      expect(await store().getSummary({ tenantId: 'tenant-b', userId: scopeA.userId }, second.id)).toBeUndefined();
    });

    it('refuses a summary when the watermark moved meanwhile and writes nothing', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('a'), makeNewMessage('b'), makeNewMessage('c')]);
      await store().insertSummary(scopeA, makeNewSummary(2), { expectedWatermark: 0 });
      const late = store().insertSummary(scopeA, makeNewSummary(3), { expectedWatermark: 0 });
      await expect(late).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'conflict'));
      expect(await store().listSummaries(scopeA)).toHaveLength(1);
      expect((await store().getUsageTotals(scopeA)).compactions).toBe(1);
    });

    it('refuses ranges past the last message or behind the watermark, and unknown conversations', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('a'), makeNewMessage('b')]);
      const isInvalid = (error: unknown) => isMemoryError(error, 'invalid_input');
      await expect(store().insertSummary(scopeA, makeNewSummary(3), { expectedWatermark: 0 })).rejects.toSatisfy(
        isInvalid,
      );
      await store().insertSummary(scopeA, makeNewSummary(2), { expectedWatermark: 0 });
      await expect(store().insertSummary(scopeA, makeNewSummary(1), { expectedWatermark: 2 })).rejects.toSatisfy(
        isInvalid,
      );
      const unknown = store().insertSummary({ ...scopeA, conversationId: 'none' }, makeNewSummary(1), {
        expectedWatermark: 0,
      });
      await expect(unknown).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'not_found'));
    });

    it('erases summaries with their conversation', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('a')]);
      const summary = await store().insertSummary(scopeA, makeNewSummary(1), { expectedWatermark: 0 });
      await store().deleteUser({ tenantId: scopeA.tenantId, userId: scopeA.userId });
      expect(await store().listSummaries(scopeA)).toEqual([]);
      expect(
        await store().getSummary({ tenantId: scopeA.tenantId, userId: scopeA.userId }, summary.id),
      ).toBeUndefined();
    });
  });
}

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import type { Scope } from '../messages/scope.js';
import type { Store } from '../store/store.js';
import { makeNewMessage, scopeA } from './conformance-fixtures.js';
import { describeErasureConformance } from './erasure-conformance.js';
import { describeInspectionConformance } from './inspection-conformance.js';
import { describeConversationMetadataConformance } from './conversation-metadata-conformance.js';
import { describeJobConformance } from './job-conformance.js';
import { describeJobWorkerConformance } from './job-worker-conformance.js';
import { describeKnowledgeConformance } from './knowledge-conformance.js';
import { describeMemoryFileConformance } from './memory-file-conformance.js';
import { describeRecallConformance } from './recall-conformance.js';
import { describeSummaryConformance } from './summary-conformance.js';
import { describeTransferConformance } from './transfer-conformance.js';

/** How the suite gets a fresh, empty store for each test, and disposes of it afterwards. */
export interface StoreConformanceOptions {
  /** Name shown in the test titles, e.g. `SqliteStore`. */
  readonly name: string;
  readonly createStore: () => Store | Promise<Store>;
  /** Runs after each test's store is closed (e.g. to delete its files); it must remove every store `createStore` made. */
  readonly cleanup?: () => void | Promise<void>;
}

/**
 * The behaviour every {@link Store} adapter must show: order, idempotency, concurrency, paging, conversation
 * metadata and role counts, the usage ledger, tenant isolation and erase, and the job worker running on the store. Call it from the adapter's test file inside Vitest.
 */
export function runStoreConformance(options: StoreConformanceOptions): void {
  describe(`${options.name} store conformance`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await options.createStore();
    });
    afterEach(async () => {
      await store.close();
      await options.cleanup?.();
    });

    describe('messages', () => {
      it('stores messages verbatim with gapless seqs in order when appended one by one and in batches', async () => {
        const contents = ['hello', '  spaced  \n', 'ünïcødé 🚀 中文', 'x'.repeat(10_000)];
        await store.appendMessages(scopeA, [makeNewMessage(contents[0]!)]);
        await store.appendMessages(
          scopeA,
          contents.slice(1).map((content) => makeNewMessage(content)),
        );
        const stored = await store.listMessages(scopeA);
        expect(stored.map((message) => message.seq)).toEqual([1, 2, 3, 4]);
        expect(stored.map((message) => message.content)).toEqual(contents);
        expect(new Set(stored.map((message) => message.id)).size).toBe(4);
      });

      it('round-trips every message field when read back', async () => {
        const toolCalls = [
          { id: 'call_1', type: 'function' as const, function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
        ];
        const input = [
          makeNewMessage('', { role: 'assistant', toolCalls, name: 'bot', metadata: { node: '!a1b2', hops: 3 } }),
          makeNewMessage('{"temp":4}', { role: 'tool', toolCallId: 'call_1', createdAt: '2024-05-01T10:00:00.000Z' }),
        ];
        const appended = await store.appendMessages(scopeA, input);
        const [call, result] = await store.listMessages(scopeA);
        expect(call).toMatchObject({
          role: 'assistant',
          content: '',
          name: 'bot',
          toolCalls,
          metadata: { node: '!a1b2', hops: 3 },
        });
        expect(call?.toolCallId).toBeUndefined();
        expect(result).toMatchObject({
          role: 'tool',
          toolCallId: 'call_1',
          createdAt: '2024-05-01T10:00:00.000Z',
          tokens: 10,
        });
        expect(result?.name).toBeUndefined();
        expect(appended).toEqual([call, result]);
      });

      it('reads seq ranges in both directions with a limit', async () => {
        await store.appendMessages(
          scopeA,
          Array.from({ length: 10 }, (_, index) => makeNewMessage(`m${index + 1}`)),
        );
        const seqs = async (range: Parameters<Store['listMessages']>[1]) =>
          (await store.listMessages(scopeA, range)).map((m) => m.seq);
        expect(await seqs({ afterSeq: 3, beforeSeq: 7 })).toEqual([4, 5, 6]);
        expect(await seqs({ order: 'desc', limit: 3 })).toEqual([10, 9, 8]);
        expect(await seqs({ order: 'desc', beforeSeq: 5, limit: 2 })).toEqual([4, 3]);
        expect(await seqs({ afterSeq: 8 })).toEqual([9, 10]);
        expect(await store.listMessages({ ...scopeA, conversationId: 'never-written' })).toEqual([]);
      });

      it('keeps counters of messages and tokens on the conversation', async () => {
        expect(await store.getConversation(scopeA)).toBeUndefined();
        await store.appendMessages(scopeA, [makeNewMessage('abc'), makeNewMessage('defgh')]);
        expect(await store.getConversation(scopeA)).toMatchObject({
          ...scopeA,
          messageCount: 2,
          totalTokens: 8,
          summarizedThroughSeq: 0,
        });
      });

      it('stores nothing and creates no conversation for an empty batch', async () => {
        expect(await store.appendMessages(scopeA, [])).toEqual([]);
        expect(await store.getConversation(scopeA)).toBeUndefined();
      });
    });

    describe('idempotency', () => {
      it('returns the stored message instead of storing a retry with the same key', async () => {
        const [first] = await store.appendMessages(scopeA, [makeNewMessage('once', { idempotencyKey: 'k1' })]);
        const [retry] = await store.appendMessages(scopeA, [makeNewMessage('once', { idempotencyKey: 'k1' })]);
        const [again, fresh] = await store.appendMessages(scopeA, [
          makeNewMessage('once', { idempotencyKey: 'k1' }),
          makeNewMessage('twice', { idempotencyKey: 'k2' }),
        ]);
        expect(retry).toEqual(first);
        expect(again).toEqual(first);
        expect(fresh?.seq).toBe(2);
        expect((await store.listMessages(scopeA)).map((message) => message.content)).toEqual(['once', 'twice']);
      });

      it('rejects a reused key with different content as a conflict and stores nothing of the batch', async () => {
        await store.appendMessages(scopeA, [makeNewMessage('original', { idempotencyKey: 'k1' })]);
        const attempt = store.appendMessages(scopeA, [
          makeNewMessage('new one'),
          makeNewMessage('changed', { idempotencyKey: 'k1' }),
        ]);
        await expect(attempt).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'conflict'));
        expect((await store.listMessages(scopeA)).map((message) => message.content)).toEqual(['original']);
      });

      it('scopes keys to their conversation', async () => {
        await store.appendMessages(scopeA, [makeNewMessage('a', { idempotencyKey: 'same' })]);
        const other = { ...scopeA, conversationId: 'conv-2' };
        const [stored] = await store.appendMessages(other, [makeNewMessage('b', { idempotencyKey: 'same' })]);
        expect(stored?.content).toBe('b');
      });
    });

    describe('concurrency', () => {
      it('loses and duplicates nothing when 20 appenders write to one conversation at once', async () => {
        const writers = Array.from({ length: 20 }, (_, writer) =>
          (async () => {
            for (let index = 0; index < 10; index += 1) {
              await store.appendMessages(scopeA, [
                makeNewMessage(`w${writer}-${index}`, { idempotencyKey: `w${writer}-${index}` }),
              ]);
            }
          })(),
        );
        // Retries racing the originals must not duplicate either.
        const retries = Array.from({ length: 20 }, (_, writer) =>
          store.appendMessages(scopeA, [makeNewMessage(`w${writer}-0`, { idempotencyKey: `w${writer}-0` })]),
        );
        await Promise.all([...writers, ...retries]);
        const stored = await store.listMessages(scopeA);
        expect(stored.map((message) => message.seq)).toEqual(Array.from({ length: 200 }, (_, index) => index + 1));
        expect(new Set(stored.map((message) => message.content)).size).toBe(200);
        for (let writer = 0; writer < 20; writer += 1) {
          const own = stored
            .filter((message) => message.content.startsWith(`w${writer}-`))
            .map((message) => message.content);
          expect(own).toEqual(Array.from({ length: 10 }, (_, index) => `w${writer}-${index}`));
        }
      });
    });

    describe('conversations', () => {
      it('lists every conversation exactly once across pages, ordered, filtered by user', async () => {
        for (let index = 0; index < 25; index += 1) {
          const userId = index % 2 === 0 ? 'even' : 'odd';
          await store.appendMessages(
            { tenantId: 'tenant-a', userId, conversationId: `c${String(index).padStart(2, '0')}` },
            [makeNewMessage('hi')],
          );
        }
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.listConversations(
            { tenantId: 'tenant-a' },
            { limit: 10, ...(cursor === undefined ? {} : { cursor }) },
          );
          expect(page.items.length).toBeLessThanOrEqual(10);
          seen.push(...page.items.map((c) => `${c.userId}/${c.conversationId}`));
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        expect(seen).toHaveLength(25);
        expect(seen).toEqual([...seen].sort());
        const odd = await store.listConversations({ tenantId: 'tenant-a', userId: 'odd' });
        expect(odd.items).toHaveLength(12);
        expect(odd.nextCursor).toBeUndefined();
      });

      it('rejects a damaged cursor and an out-of-range page size as invalid input', async () => {
        await expect(store.listConversations({ tenantId: 'tenant-a' }, { cursor: 'not-a-cursor' })).rejects.toSatisfy(
          (error: unknown) => isMemoryError(error, 'invalid_input'),
        );
        await expect(store.listConversations({ tenantId: 'tenant-a' }, { limit: 0 })).rejects.toSatisfy(
          (error: unknown) => isMemoryError(error, 'invalid_input'),
        );
      });
    });

    describe('usage ledger', () => {
      it('sums the context builds of a conversation', async () => {
        await store.appendMessages(scopeA, [makeNewMessage('hi')]);
        const createdAt = new Date().toISOString();
        await store.insertUsage(scopeA, {
          kind: 'context',
          policy: 'window',
          sentTokens: 100,
          fullHistoryTokens: 400,
          createdAt,
        });
        await store.insertUsage(scopeA, {
          kind: 'context',
          policy: 'window',
          sentTokens: 50,
          fullHistoryTokens: 450,
          createdAt,
        });
        expect(await store.getUsageTotals(scopeA)).toMatchObject({
          requests: 2,
          sentTokens: 150,
          fullHistoryTokens: 850,
          savedTokens: 700,
          compactions: 0,
        });
        const empty = await store.getUsageTotals({ ...scopeA, conversationId: 'none' });
        expect(empty).toMatchObject({
          requests: 0,
          sentTokens: 0,
          fullHistoryTokens: 0,
          savedTokens: 0,
          netSavedTokens: 0,
        });
      });

      it('sums each figure over its own kind: context tokens over context builds, summarizer tokens over summarizer calls', async () => {
        await store.appendMessages(scopeA, [makeNewMessage('hi')]);
        const createdAt = new Date().toISOString();
        // Figures a kind does not have (the ledger says 0 for them), given anyway: no store may add them in.
        await store.insertUsage(scopeA, {
          kind: 'context',
          policy: 'hybrid',
          sentTokens: 100,
          fullHistoryTokens: 400,
          inputTokens: 7,
          outputTokens: 3,
          createdAt,
        });
        await store.insertUsage(scopeA, {
          kind: 'summarize',
          policy: 'extractive@1',
          sentTokens: 11,
          fullHistoryTokens: 13,
          inputTokens: 200,
          outputTokens: 20,
          createdAt,
        });
        expect(await store.getUsageTotals(scopeA)).toMatchObject({
          requests: 1,
          sentTokens: 100,
          fullHistoryTokens: 400,
          savedTokens: 300,
          compactions: 1,
          summarizerInputTokens: 200,
          summarizerOutputTokens: 20,
          netSavedTokens: 80,
        });
      });

      it('refuses usage for a conversation that does not exist', async () => {
        const record = {
          kind: 'context' as const,
          policy: 'full',
          sentTokens: 1,
          fullHistoryTokens: 1,
          createdAt: new Date().toISOString(),
        };
        await expect(store.insertUsage(scopeA, record)).rejects.toSatisfy((error: unknown) =>
          isMemoryError(error, 'not_found'),
        );
      });
    });

    describe('tenant isolation', () => {
      it('never shows one tenant the rows of another with the same user and conversation ids', async () => {
        const scopeB: Scope = { ...scopeA, tenantId: 'tenant-b' };
        await store.appendMessages(scopeA, [makeNewMessage('secret of A', { idempotencyKey: 'k' })]);
        await store.appendMessages(scopeB, [makeNewMessage('secret of B', { idempotencyKey: 'k' })]);
        expect((await store.listMessages(scopeA)).map((m) => m.content)).toEqual(['secret of A']);
        expect((await store.listMessages(scopeB)).map((m) => m.content)).toEqual(['secret of B']);
        expect((await store.listMessages(scopeB))[0]?.seq).toBe(1);
        const listedB = await store.listConversations({ tenantId: 'tenant-b' });
        expect(listedB.items.map((c) => c.tenantId)).toEqual(['tenant-b']);
        expect((await store.listConversations({ tenantId: 'tenant-c' })).items).toEqual([]);
        await store.deleteUser({ tenantId: 'tenant-b', userId: scopeA.userId });
        expect((await store.listMessages(scopeA)).map((m) => m.content)).toEqual(['secret of A']);
      });

      it('keeps users of one tenant apart', async () => {
        await store.appendMessages(scopeA, [makeNewMessage('mine')]);
        const otherUser = { ...scopeA, userId: 'user-2' };
        expect(await store.listMessages(otherUser)).toEqual([]);
        expect(await store.getConversation(otherUser)).toBeUndefined();
      });
    });

    describe('erase', () => {
      it('removes a conversation with its messages and usage, and starts over at seq 1', async () => {
        await store.appendMessages(scopeA, [makeNewMessage('one', { idempotencyKey: 'k' }), makeNewMessage('two')]);
        await store.insertUsage(scopeA, {
          kind: 'context',
          policy: 'full',
          sentTokens: 5,
          fullHistoryTokens: 5,
          createdAt: new Date().toISOString(),
        });
        const kept = { ...scopeA, conversationId: 'kept' };
        await store.appendMessages(kept, [makeNewMessage('stays')]);
        expect(await store.deleteConversation(scopeA)).toEqual({ conversations: 1, messages: 2 });
        expect(await store.listMessages(scopeA)).toEqual([]);
        expect(await store.getConversation(scopeA)).toBeUndefined();
        expect((await store.getUsageTotals(scopeA)).requests).toBe(0);
        expect(await store.deleteConversation(scopeA)).toEqual({ conversations: 0, messages: 0 });
        const [again] = await store.appendMessages(scopeA, [makeNewMessage('fresh', { idempotencyKey: 'k' })]);
        expect(again).toMatchObject({ seq: 1, content: 'fresh' });
        expect(await store.listMessages(kept)).toHaveLength(1);
      });

      it('removes every conversation of a user and nothing of other users', async () => {
        for (const conversationId of ['a', 'b', 'c']) {
          await store.appendMessages({ ...scopeA, conversationId }, [makeNewMessage('x'), makeNewMessage('y')]);
        }
        const neighbour = { ...scopeA, userId: 'user-2' };
        await store.appendMessages(neighbour, [makeNewMessage('z')]);
        expect(await store.deleteUser({ tenantId: scopeA.tenantId, userId: scopeA.userId })).toEqual({
          conversations: 3,
          messages: 6,
        });
        expect((await store.listConversations({ tenantId: scopeA.tenantId })).items.map((c) => c.userId)).toEqual([
          'user-2',
        ]);
        expect(await store.listMessages(neighbour)).toHaveLength(1);
      });
    });

    describeConversationMetadataConformance(() => store);
    describeSummaryConformance(() => store);
    describeJobConformance(() => store);
    describeJobWorkerConformance(() => store);
    describeInspectionConformance(() => store);
    describeMemoryFileConformance(() => store);
    describeRecallConformance(() => store);
    describeKnowledgeConformance(() => store);
    describeErasureConformance(() => store);
    describeTransferConformance(() => store, options.createStore);

    describe('lifecycle', () => {
      it('fails with unavailable after close', async () => {
        await store.close();
        await expect(store.listMessages(scopeA)).rejects.toSatisfy((error: unknown) =>
          isMemoryError(error, 'unavailable'),
        );
        store = await options.createStore();
      });
    });
  });
}

import { describe, expect, it } from 'vitest';
import { isMemoryError, MemoryError } from '../errors/memory-error.js';
import { ComposedStore } from './composed-store.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { resolveExportPageSize } from '../store/store-records.js';
import type { StoreComposition } from './composed-store.js';

const scope = { tenantId: 't', userId: 'u', conversationId: 'c' };
const lease = { id: 'job-1', leaseOwner: 'w' };

/** Parts that record every call as `part.method(args)`; a method named in `failing` throws a driver-like error. */
function recordingComposition(failing: ReadonlySet<string> = new Set()) {
  const calls: string[] = [];
  let closes = 0;
  const part = (name: string) =>
    new Proxy(
      {},
      {
        get:
          (_target, method: string) =>
          (...args: unknown[]) => {
            calls.push(`${name}.${method}${JSON.stringify(args)}`);
            if (failing.has(method)) throw new Error(`driver said no to ${method}`);
            return method === 'listSummaries' ? [] : undefined;
          },
      },
    );
  const composition = {
    messages: part('messages'),
    usage: part('usage'),
    summaries: part('summaries'),
    jobs: part('jobs'),
    search: part('search'),
    knowledge: part('knowledge'),
    files: part('files'),
    transfer: {
      // One page, then the driver fails: the port's caller gets the wrapped error from the iteration.
      async *exportRecords(options: { pageSize?: number } = {}) {
        const pageSize = resolveExportPageSize(options.pageSize);
        calls.push(`transfer.exportRecords[${pageSize}]`);
        yield [{ kind: 'cursor', scope, name: 'facts', position: 1 }];
        throw new Error('driver said no to the second page');
      },
      importRecords: async () => {
        throw new Error('driver said no to importRecords');
      },
    },
    erasure: {
      deleteConversation: () => ({ messages: 1, summaries: 0, conversations: 1 }),
      deleteUser: () => ({ messages: 2, summaries: 0, conversations: 2 }),
    },
    toError: (error: unknown, action: string) =>
      isMemoryError(error)
        ? error
        : new MemoryError('storage_failed', `${action} failed: ${(error as Error).message}`, { cause: error }),
    closeConnection: () => {
      closes += 1;
    },
  } as unknown as StoreComposition;
  return { composition, calls, closes: () => closes };
}

describe('ComposedStore', () => {
  it('hands each part the arguments of the port, call options included, on the part of its concept', async () => {
    const { composition, calls } = recordingComposition();
    const store = new ComposedStore(composition);
    await store.insertSummary(scope, { fromSeq: 1, toSeq: 2 } as never, {
      expectedWatermark: 0,
      expectedErasedMessages: 3,
    });
    await store.completeJob(lease, '2026-01-01T00:00:00.000Z', { warning: 'fallback summarizer' });
    await store.insertFact(scope, { subject: 's' } as never, { supersedes: 'fact-0' });
    await store.countJobsByKind({ tenantId: 't' });
    await store.insertUsage(scope, { kind: 'context' } as never);
    await store.listFacts(scope);
    expect(calls).toEqual([
      `summaries.insertSummary${JSON.stringify([scope, { fromSeq: 1, toSeq: 2 }, { expectedWatermark: 0, expectedErasedMessages: 3 }])}`,
      `jobs.completeJob${JSON.stringify([lease, '2026-01-01T00:00:00.000Z', { warning: 'fallback summarizer' }])}`,
      `knowledge.insertFact${JSON.stringify([scope, { subject: 's' }, { supersedes: 'fact-0' }])}`,
      'jobs.countJobsByKind[{"tenantId":"t"}]',
      `usage.insertUsage${JSON.stringify([scope, { kind: 'context' }])}`,
      `knowledge.listFacts${JSON.stringify([scope])}`,
    ]);
  });

  it('checks the signal where each port keeps its call options', async () => {
    const { composition, calls } = recordingComposition();
    const store = new ComposedStore(composition);
    const signal = AbortSignal.abort();
    await expect(store.searchKeyword(scope, ['relay'], { k: 5 }, { signal })).rejects.toMatchObject({
      code: 'unavailable',
      message: 'searching by keyword was aborted',
    });
    await expect(store.insertSummary(scope, {} as never, { expectedWatermark: 0, signal })).rejects.toMatchObject({
      code: 'unavailable',
    });
    await expect(store.renameMemoryFiles(scope, '/a', '/b', 'now', { signal })).rejects.toMatchObject({
      code: 'unavailable',
    });
    await expect(store.eraseMessages(scope, {}, { now: 'now', signal })).rejects.toMatchObject({ code: 'unavailable' });
    expect(calls).toEqual([]);
  });

  it('guards InMemoryStore the same way: an aborted signal and a closed store are unavailable', async () => {
    const store = new InMemoryStore();
    await expect(store.appendMessages(scope, [], { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'unavailable',
      details: { aborted: true },
    });
    await store.close();
    await expect(store.listMessages(scope)).rejects.toMatchObject({
      code: 'unavailable',
      message: 'listing messages failed: the store is closed',
    });
  });

  it('wraps what a part throws with the action that failed, as a rejected promise', async () => {
    const { composition } = recordingComposition(new Set(['appendMessages']));
    const store = new ComposedStore(composition);
    const error = await store.appendMessages(scope, []).catch((caught: unknown) => caught);
    expect(isMemoryError(error, 'storage_failed')).toBe(true);
    expect((error as MemoryError).message).toBe('appending messages failed: driver said no to appendMessages');
  });

  it('runs nothing and fails with unavailable when the signal is aborted or the store closed, and closes once', async () => {
    const { composition, calls, closes } = recordingComposition();
    const store = new ComposedStore(composition);
    await expect(store.listSummaries(scope, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'unavailable',
      details: { aborted: true },
    });
    expect(await store.deleteUser(scope)).toEqual({ messages: 2, summaries: 0, conversations: 2 });
    await store.close();
    await store.close();
    expect(closes()).toBe(1);
    await expect(store.listSummaries(scope)).rejects.toMatchObject({
      code: 'unavailable',
      message: 'listing summaries failed: the store is closed',
    });
    expect(calls).toEqual([]);
  });

  it('pages an export from the transfer part and wraps what it throws, during the iteration too', async () => {
    const { composition, calls } = recordingComposition();
    const store = new ComposedStore(composition);
    const pages: unknown[] = [];
    const error = await (async () => {
      for await (const page of store.exportRecords({ pageSize: 7 })) pages.push(page);
    })().catch((caught: unknown) => caught);
    expect(pages).toEqual([[{ kind: 'cursor', scope, name: 'facts', position: 1 }]]);
    expect(error).toMatchObject({
      code: 'storage_failed',
      message: 'exporting records failed: driver said no to the second page',
    });
    expect(calls).toEqual(['transfer.exportRecords[7]']);
    await expect(store.importRecords([])).rejects.toMatchObject({
      code: 'storage_failed',
      message: 'importing records failed: driver said no to importRecords',
    });
    await expect(store.exportRecords({ pageSize: 0 })[Symbol.asyncIterator]().next()).rejects.toMatchObject({
      code: 'invalid_input',
      details: { field: 'pageSize' },
    });
    await store.close();
    await expect(store.exportRecords()[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: 'unavailable' });
  });
});

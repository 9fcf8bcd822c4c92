import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import type { UserScope } from '../messages/scope.js';
import type { Store } from '../store/store.js';
import type { StoreRecord } from '../store/store-records.js';
import { at, makeNewMessage, scopeA } from './conformance-fixtures.js';
import { InMemoryStore } from './in-memory-store.js';
import { makeNewSummary } from './summary-conformance.js';

const userA: UserScope = { tenantId: scopeA.tenantId, userId: scopeA.userId };
const scopeB = { tenantId: 'tenant-b', userId: 'user-2', conversationId: 'conv-x' };
const userB: UserScope = { tenantId: scopeB.tenantId, userId: scopeB.userId };
const scopeA2 = { ...scopeA, conversationId: 'conv-2' };

/**
 * Writes every kind of row an export carries, in two tenants, through the port: conversations with
 * metadata, messages with tool calls, names, metadata and idempotency keys, usage, summary versions that
 * fold each other, cursors, facts with a supersession and a retirement, entities merged by alias (one name
 * two entities carry), relations current and retired, memory files; plus a job and vectors, which are not exported.
 */
export async function populateEveryKindOfRow(store: Store): Promise<void> {
  const toolCalls = [
    { id: 'call_1', type: 'function' as const, function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
  ];
  await store.appendMessages(scopeA, [
    makeNewMessage('hello there', { createdAt: at(1), idempotencyKey: 'k-1', metadata: { node: '!a1b2', hops: 3 } }),
    makeNewMessage('', { role: 'assistant', name: 'bot', toolCalls, createdAt: at(2) }),
    makeNewMessage('{"temp":4}', { role: 'tool', toolCallId: 'call_1', createdAt: at(3) }),
    makeNewMessage('ünïcødé 🚀 中文 and the larch ridge relay', { createdAt: at(4) }),
  ]);
  await store.appendMessages(scopeA2, [makeNewMessage('second conversation', { createdAt: at(5) })]);
  await store.appendMessages(scopeB, [makeNewMessage('other tenant', { createdAt: at(6), idempotencyKey: 'k-1' })]);
  await store.updateConversationMetadata(scopeA, { title: 'Trip', tags: ['a', 'b'], nested: { n: 1.5 } });
  await store.insertUsage(scopeA, {
    kind: 'context',
    policy: 'hybrid',
    sentTokens: 40,
    fullHistoryTokens: 90,
    createdAt: at(7),
  });
  await store.insertUsage(scopeB, {
    kind: 'context',
    policy: 'recent',
    sentTokens: 4,
    fullHistoryTokens: 9,
    createdAt: at(8),
  });
  const first = await store.insertSummary(scopeA, makeNewSummary(2, { createdAt: at(9) }), { expectedWatermark: 0 });
  await store.insertSummary(
    scopeA,
    makeNewSummary(3, { level: 1, foldedSummaryIds: [first.id], fallbackReason: 'timeout', createdAt: at(10) }),
    {
      expectedWatermark: 2,
    },
  );
  await store.advanceCursor(scopeA, 'facts', 0, 3);
  await store.advanceCursor(scopeB, 'graph', 0, 1);
  const fact = (attribute: string, value: string, validFrom: string) => ({
    subject: 'user',
    attribute,
    value,
    text: `my ${attribute} is ${value}`,
    confidence: 0.75,
    validFrom,
    sourceConversationId: scopeA.conversationId,
    sourceSeqs: [1, 4],
    extractor: 'test@1',
    createdAt: validFrom,
  });
  const june14 = await store.insertFact(userA, fact('trip_date', '14 June', at(11)));
  await store.insertFact(userA, fact('trip_date', '21 June', at(12)), { supersedes: june14.id });
  const town = await store.insertFact(userA, fact('home_town', 'Hood River', at(13)));
  await store.retireFact(userA, town.id, at(14));
  const { sourceConversationId: _unsourced, ...tea } = fact('likes', 'tea', at(15));
  await store.insertFact(userB, tea);
  const relay = await store.upsertEntity(
    userA,
    { name: 'LARCH-RIDGE', type: 'device', aliases: ['!5c11e08a'] },
    at(16),
  );
  await store.upsertEntity(
    userA,
    { name: '!5c11e08a', type: 'other', aliases: ['the ridge relay'], description: 'solar relay' },
    at(17),
  );
  const maren = await store.upsertEntity(userA, { name: 'Maren', type: 'person', aliases: ['M'] }, at(18));
  const uses = await store.insertRelation(
    userA,
    { subjectId: maren.id, predicate: 'uses_relay', objectId: relay.id, validFrom: at(19), sourceSeqs: [4] },
    at(19),
  );
  await store.retireRelation(userA, uses.id, at(20));
  await store.insertRelation(
    userA,
    {
      subjectId: maren.id,
      predicate: 'owns',
      objectId: relay.id,
      validFrom: at(21),
      sourceConversationId: scopeA.conversationId,
      sourceSeqs: [],
    },
    at(21),
  );
  await store.upsertEntity(userB, { name: 'Maren', type: 'person' }, at(22));
  await store.putMemoryFile(userA, { path: '/memories/trip.md', content: 'June 14', now: at(23), expectedVersion: 0 });
  await store.putMemoryFile(userA, { path: '/memories/trip.md', content: 'June 21', now: at(24), expectedVersion: 1 });
  await store.putMemoryFile(userB, { path: '/memories/a/b.md', content: '', now: at(25) });
  await store.enqueueJob(scopeA, { kind: 'compact', runAt: at(26), maxAttempts: 3 });
  await store.upsertEmbeddings(scopeA, 'test-model', [{ seq: 1, vector: new Float32Array([1, 0, 0]) }]);
}

/** Everything a store holds for the users {@link populateEveryKindOfRow} writes, read through the port in one canonical order. */
export async function readEveryKindOfRow(store: Store): Promise<unknown> {
  const users = [userA, userB];
  const result: unknown[] = [];
  for (const user of users) {
    const conversations = (await store.listConversations(user, { limit: 1000 })).items;
    const perConversation = [];
    for (const conversation of conversations) {
      const scope = { ...user, conversationId: conversation.conversationId };
      perConversation.push({
        conversation,
        messages: await store.listMessages(scope),
        usage: (await store.listUsage(scope, { limit: 1000 })).items.map(({ position: _position, ...entry }) => ({
          ...entry,
          inputTokens: entry.inputTokens ?? 0,
          outputTokens: entry.outputTokens ?? 0,
        })),
        usageTotals: await store.getUsageTotals(scope),
        summaries: await store.listSummaries(scope),
        latestSummary: await store.getLatestSummary(scope),
        cursors: { facts: await store.getCursor(scope, 'facts'), graph: await store.getCursor(scope, 'graph') },
        roles: await store.countMessagesByRole(scope),
      });
    }
    const entities = await store.listEntities(user);
    const files = await store.listMemoryFiles(user, '/memories');
    result.push({
      user,
      perConversation,
      facts: await store.listFacts(user, { includeHistory: true }),
      currentFacts: await store.listFacts(user),
      entities,
      // The name index: every name of the user resolves to the same entity.
      lookups: await Promise.all(
        ['larch-ridge', '!5c11e08a', 'the ridge relay', 'maren', 'm'].map(async (name) =>
          (await store.listEntities(user, { query: name })).map((entity) => entity.id),
        ),
      ),
      relations: await store.listRelations(user, {
        entityIds: entities.map((entity) => entity.id),
        includeHistory: true,
      }),
      files: await Promise.all(
        files.map(async (file) => ({ file, stored: await store.getMemoryFile(user, file.path) })),
      ),
      keyword: (await store.searchKeyword(user, ['relay'], { k: 10 })).map((hit) => [
        hit.conversationId,
        hit.message.seq,
      ]),
    });
  }
  return result;
}

/** Every record of an export, pages flattened. */
export async function exportAll(store: Store, pageSize?: number): Promise<StoreRecord[]> {
  const records: StoreRecord[] = [];
  for await (const page of store.exportRecords(pageSize === undefined ? {} : { pageSize })) {
    expect(page.length).toBeGreaterThan(0);
    expect(new Set(page.map((record) => record.kind)).size).toBe(1);
    records.push(...page);
  }
  return records;
}

/** Export and import cases of the store conformance suite: a whole store moves to an empty one of this kind and of the in-memory kind, all or nothing. */
export function describeTransferConformance(store: () => Store, createStore: () => Store | Promise<Store>): void {
  describe('export and import', () => {
    it('exports every kind of row, each table in one page size or many, without jobs or vectors', async () => {
      await populateEveryKindOfRow(store());
      const records = await exportAll(store());
      const kinds = records.map((record) => record.kind);
      expect([...new Set(kinds)]).toEqual([
        'conversation',
        'message',
        'usage',
        'summary',
        'cursor',
        'fact',
        'entity',
        'relation',
        'memoryFile',
      ]);
      expect(kinds.filter((kind) => kind === 'message')).toHaveLength(6);
      expect(kinds.filter((kind) => kind === 'usage')).toHaveLength(4);
      expect(kinds.filter((kind) => kind === 'fact')).toHaveLength(4);
      const entities = records.flatMap((record) => (record.kind === 'entity' ? [record] : []));
      expect(entities.map((record) => [...record.names].sort())).toEqual([
        ['!5c11e08a', 'larch-ridge', 'the ridge relay'],
        ['m', 'maren'],
        ['maren'],
      ]);
      expect(await exportAll(store(), 1)).toEqual(records);
    });

    it('imports an export into an empty store of the same kind and of the in-memory kind with every row, id, seq and link as they were', async () => {
      await populateEveryKindOfRow(store());
      const expected = await readEveryKindOfRow(store());
      const records = await exportAll(store());
      for (const target of [await createStore(), new InMemoryStore()]) {
        try {
          const counts = await target.importRecords(store().exportRecords({ pageSize: 2 }));
          expect(counts).toEqual({
            conversations: 3,
            messages: 6,
            usage: 4,
            summaries: 2,
            cursors: 2,
            facts: 4,
            entities: 3,
            entity_names: 6,
            relations: 2,
            memory_files: 2,
          });
          expect(await readEveryKindOfRow(target)).toEqual(expected);
          expect(await target.listJobs(scopeA)).toEqual([]);
          expect(await target.listUnembeddedMessages(scopeA, 'test-model', 10)).toHaveLength(4);
          if (!(target instanceof InMemoryStore)) expect(await exportAll(target)).toEqual(records);
          // The imported store goes on as the original would: the next append takes the next seq.
          const [next] = await target.appendMessages(scopeA, [makeNewMessage('after the import')]);
          expect(next?.seq).toBe(5);
          expect(
            await target.appendMessages(scopeA, [makeNewMessage('hello there', { idempotencyKey: 'k-1' })]),
          ).toMatchObject([{ seq: 1 }]);
        } finally {
          await target.close();
        }
      }
    });

    it('imports an in-memory export into this kind of store', async () => {
      const source = new InMemoryStore();
      await populateEveryKindOfRow(source);
      await store().importRecords(source.exportRecords());
      expect(await readEveryKindOfRow(store())).toEqual(await readEveryKindOfRow(source));
    });

    it('refuses a store that holds rows without replace and replaces it whole with replace', async () => {
      const source = await createStore();
      try {
        await populateEveryKindOfRow(source);
        await store().appendMessages(scopeA2, [makeNewMessage('already here')]);
        await store().enqueueJob(scopeA2, { kind: 'embed', runAt: at(1), maxAttempts: 3 });
        await store().upsertEmbeddings(scopeA2, 'test-model', [{ seq: 1, vector: new Float32Array([0, 1, 0]) }]);
        await expect(store().importRecords(source.exportRecords())).rejects.toSatisfy(
          (error: unknown) =>
            isMemoryError(error, 'invalid_input') && error.details?.field === 'replace' && error.details?.rows === 2,
        );
        expect((await store().listMessages(scopeA2)).map((message) => message.content)).toEqual(['already here']);
        await store().importRecords(source.exportRecords(), { replace: true });
        expect(await readEveryKindOfRow(store())).toEqual(await readEveryKindOfRow(source));
        expect(await store().listJobs(scopeA2)).toEqual([]);
        // The replaced vectors are gone, and the same model embeds the imported messages afresh.
        expect(await store().searchVector(userA, 'test-model', new Float32Array([0, 1, 0]), { k: 5 })).toEqual([]);
        await store().upsertEmbeddings(scopeA, 'test-model', [{ seq: 4, vector: new Float32Array([0, 1, 0]) }]);
        expect(
          (await store().searchVector(userA, 'test-model', new Float32Array([0, 1, 0]), { k: 5 })).map((hit) => [
            hit.conversationId,
            hit.message.seq,
          ]),
        ).toEqual([[scopeA.conversationId, 4]]);
      } finally {
        await source.close();
      }
    });

    it('imports all or nothing: a bad record part-way leaves the store as it was', async () => {
      const source = new InMemoryStore();
      await populateEveryKindOfRow(source);
      const records = await exportAll(source);
      const orphan: StoreRecord = {
        kind: 'message',
        scope: { ...scopeA, conversationId: 'nowhere' },
        message: (records[5] as Extract<StoreRecord, { kind: 'message' }>).message,
      };
      const badTime: StoreRecord = {
        kind: 'fact',
        fact: {
          ...(records.find((record) => record.kind === 'fact') as Extract<StoreRecord, { kind: 'fact' }>).fact,
          validFrom: 'yesterday',
        },
      };
      await store().appendMessages(scopeA2, [makeNewMessage('kept')]);
      for (const bad of [orphan, badTime, { kind: 'nonsense' } as unknown as StoreRecord]) {
        await expect(store().importRecords([records.slice(0, 3), [bad]], { replace: true })).rejects.toSatisfy(
          (error: unknown) => isMemoryError(error),
        );
        expect((await store().listMessages(scopeA2)).map((message) => message.content)).toEqual(['kept']);
        expect((await store().listConversations(userA)).items).toHaveLength(1);
      }
    });
  });
}

import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import type { NewFact } from '../facts/fact.js';
import type { Scope } from '../messages/scope.js';
import { HashedEmbedder } from '../recall/hashed-embedder.js';
import { keywordTerms } from '../recall/keyword-terms.js';
import type { Store } from '../store/store.js';
import { makeNewMessage, scopeA } from './conformance-fixtures.js';

const user = { tenantId: scopeA.tenantId, userId: scopeA.userId };
const embedder = new HashedEmbedder({ dimensions: 64 });
const now = '2030-01-01T00:00:00.000Z';
const day = 86_400_000;
const start = Date.UTC(2024, 0, 1);
const lines = [
  'My relay is LARCH-RIDGE.',
  'The secret word is zorblaxian.',
  'I hiked to the lookout.',
  'The relay LARCH-RIDGE is fine.',
];

async function seed(store: Store, scope: Scope, contents: readonly string[], startMs = start): Promise<void> {
  await store.appendMessages(
    scope,
    contents.map((content, index) =>
      makeNewMessage(content, { createdAt: new Date(startMs + index * day).toISOString() }),
    ),
  );
  const pending = await store.listUnembeddedMessages(scope, embedder.model, 1000);
  const vectors = await embedder.embed(pending.map((message) => message.content));
  await store.upsertEmbeddings(
    scope,
    embedder.model,
    pending.map((message, index) => ({ seq: message.seq, vector: vectors[index]! })),
  );
}

function fact(
  attribute: string,
  value: string,
  seqs: readonly number[],
  validFrom = new Date(start).toISOString(),
): NewFact {
  return {
    subject: 'user',
    attribute,
    value,
    text: `My ${attribute} is ${value}`,
    confidence: 0.9,
    validFrom,
    sourceConversationId: scopeA.conversationId,
    sourceSeqs: seqs,
    extractor: 'test@1',
    createdAt: validFrom,
  };
}

async function summarize(store: Store, scope: Scope, toSeq: number, watermark: number, content: string): Promise<void> {
  await store.insertSummary(
    scope,
    {
      level: 0,
      fromSeq: 1,
      toSeq,
      content,
      tokens: 5,
      foldedSummaryIds: [],
      summarizer: 'test@1',
      inputTokens: 0,
      outputTokens: 0,
      createdAt: now,
    },
    { expectedWatermark: watermark },
  );
}

/** Erasure cases of the store conformance suite: single messages, ranges and times, with everything derived from them. */
export function describeErasureConformance(store: () => Store): void {
  describe('message erasure', () => {
    it('erases one message with its vectors, from both indexes, and never gives its seq again', async () => {
      await seed(store(), scopeA, lines);
      // Searched once first, so any in-memory copy of the indexes holds the message before it is erased.
      expect(
        (await store().searchKeyword(user, keywordTerms('zorblaxian'), { k: 5 })).map((hit) => hit.message.seq),
      ).toEqual([2]);
      const [query] = await embedder.embed([lines[1]!]);
      expect((await store().searchVector(user, embedder.model, query!, { k: 1 }))[0]?.message.seq).toBe(2);
      const before = await store().getConversation(scopeA);
      const receipt = await store().eraseMessages(
        user,
        { conversationId: scopeA.conversationId, fromSeq: 2, toSeq: 2 },
        { now },
      );
      expect(receipt).toMatchObject({ messages: 1, conversations: 1, vectors: 1, summaries: 0 });
      expect((await store().listMessages(scopeA)).map((message) => message.seq)).toEqual([1, 3, 4]);
      expect(await store().searchKeyword(user, keywordTerms('zorblaxian'), { k: 5 })).toEqual([]);
      expect(
        (await store().searchVector(user, embedder.model, query!, { k: 5 })).map((hit) => hit.message.seq),
      ).not.toContain(2);
      expect(
        (await store().searchKeyword(user, keywordTerms('relay'), { k: 5 })).map((hit) => hit.message.seq).sort(),
      ).toEqual([1, 4]);
      const after = await store().getConversation(scopeA);
      expect(after).toMatchObject({
        messageCount: 4,
        erasedMessages: 1,
        totalTokens: before!.totalTokens - lines[1]!.length,
      });
      const [next] = await store().appendMessages(scopeA, [makeNewMessage('after the erase')]);
      expect(next?.seq).toBe(5);
      expect(await store().listUnembeddedMessages(scopeA, embedder.model, 10)).toHaveLength(1);
    });

    it('removes every summary that covered an erased message and moves the watermark back to the one left', async () => {
      await seed(store(), scopeA, lines);
      await summarize(store(), scopeA, 1, 0, 'relay LARCH-RIDGE');
      await summarize(store(), scopeA, 3, 1, 'relay LARCH-RIDGE; secret zorblaxian');
      const receipt = await store().eraseMessages(
        user,
        { conversationId: scopeA.conversationId, fromSeq: 2, toSeq: 3 },
        { now },
      );
      expect(receipt).toMatchObject({ messages: 2, summaries: 1 });
      expect((await store().listSummaries(scopeA)).map((summary) => summary.content)).toEqual(['relay LARCH-RIDGE']);
      expect(await store().getConversation(scopeA)).toMatchObject({
        summarizedThroughSeq: 1,
        summarizedTokens: lines[0]!.length,
        erasedMessages: 2,
      });
      await store().eraseMessages(user, { conversationId: scopeA.conversationId, fromSeq: 1, toSeq: 1 }, { now });
      expect(await store().listSummaries(scopeA)).toEqual([]);
      expect(await store().getConversation(scopeA)).toMatchObject({ summarizedThroughSeq: 0, summarizedTokens: 0 });
    });

    it('removes facts only the erased messages stated, trims the others, and makes a superseded fact current again', async () => {
      await seed(store(), scopeA, lines);
      const relay = await store().insertFact(user, fact('relay', 'LARCH-RIDGE', [1, 4]));
      const secret = await store().insertFact(user, fact('secret', 'zorblaxian', [2]));
      const old = await store().insertFact(user, fact('hike', 'the ridge', [1]));
      const newer = await store().insertFact(
        user,
        fact('hike', 'the lookout', [3], new Date(start + 2 * day).toISOString()),
        {
          supersedes: old.id,
        },
      );
      const byHand = await store().insertFact(user, { ...fact('name', 'Maren', []), sourceConversationId: undefined });
      const receipt = await store().eraseMessages(
        user,
        { conversationId: scopeA.conversationId, fromSeq: 2, toSeq: 3 },
        { now },
      );
      expect(receipt).toMatchObject({ facts: 2, factsKept: 0 });
      const history = await store().listFacts(user, { includeHistory: true });
      expect(history.map((item) => item.id).sort()).toEqual([relay.id, old.id, byHand.id].sort());
      expect(history.find((item) => item.id === old.id)).not.toHaveProperty('validTo');
      expect(history.find((item) => item.id === old.id)).not.toHaveProperty('supersededBy');
      expect(history.map((item) => item.id)).not.toContain(secret.id);
      expect(history.map((item) => item.id)).not.toContain(newer.id);
      await store().eraseMessages(user, { conversationId: scopeA.conversationId, fromSeq: 4, toSeq: 4 }, { now });
      const kept = (await store().listFacts(user)).find((item) => item.id === relay.id);
      expect(kept).toMatchObject({ sourceSeqs: [1], text: 'relay: LARCH-RIDGE' });
    });

    it('removes relations only the erased messages stated, and the entities only they named', async () => {
      await seed(store(), scopeA, lines);
      const maren = await store().upsertEntity(user, { name: 'Maren', type: 'person' }, now);
      const larch = await store().upsertEntity(user, { name: 'LARCH-RIDGE', type: 'device' }, now);
      const zorb = await store().upsertEntity(user, { name: 'Zorblaxian', type: 'other' }, now);
      const source = { sourceConversationId: scopeA.conversationId, validFrom: now };
      await store().insertRelation(
        user,
        { subjectId: maren.id, predicate: 'uses_relay', objectId: larch.id, sourceSeqs: [1, 2], ...source },
        now,
      );
      await store().insertRelation(
        user,
        { subjectId: maren.id, predicate: 'knows_word', objectId: zorb.id, sourceSeqs: [2], ...source },
        now,
      );
      const receipt = await store().eraseMessages(
        user,
        { conversationId: scopeA.conversationId, fromSeq: 2, toSeq: 2 },
        { now },
      );
      expect(receipt).toMatchObject({ relations: 1, entities: 1 });
      expect((await store().listEntities(user)).map((entity) => entity.name).sort()).toEqual(['LARCH-RIDGE', 'Maren']);
      const relations = await store().listRelations(user, { entityIds: [maren.id], includeHistory: true });
      expect(relations.map((relation) => [relation.predicate, relation.sourceSeqs])).toEqual([['uses_relay', [1]]]);
    });

    it("erases what was said before a time in every conversation of the user, and nobody else's", async () => {
      const other = { ...scopeA, conversationId: 'conv-2' };
      const stranger = { ...scopeA, userId: 'user-2' };
      await seed(store(), scopeA, lines);
      await seed(store(), other, lines);
      await seed(store(), stranger, lines);
      const receipt = await store().eraseMessages(user, { before: new Date(start + 2 * day).toISOString() }, { now });
      expect(receipt).toMatchObject({ messages: 4, conversations: 2, vectors: 4 });
      expect((await store().listMessages(scopeA)).map((message) => message.seq)).toEqual([3, 4]);
      expect((await store().listMessages(other)).map((message) => message.seq)).toEqual([3, 4]);
      expect(await store().listMessages(stranger)).toHaveLength(4);
      expect(
        await store().searchKeyword({ ...user, userId: 'user-2' }, keywordTerms('zorblaxian'), { k: 5 }),
      ).toHaveLength(1);
      expect(await store().eraseMessages({ ...user, tenantId: 'tenant-b' }, { before: now }, { now })).toMatchObject({
        messages: 0,
      });
      expect(await store().listMessages(scopeA)).toHaveLength(2);
    });

    it('keeps an audit entry per erasure with the selection and counts, and none of the content', async () => {
      await seed(store(), scopeA, lines);
      const receipt = await store().eraseMessages(
        user,
        { conversationId: scopeA.conversationId, fromSeq: 2, toSeq: 2 },
        { now, memoryFiles: 1 },
      );
      const [entry, ...rest] = await store().listErasures({ tenantId: user.tenantId, userId: user.userId });
      expect(rest).toEqual([]);
      expect(entry).toMatchObject({
        id: receipt.auditId,
        ...user,
        selection: { conversationId: scopeA.conversationId, fromSeq: 2, toSeq: 2 },
        erasedAt: now,
        messages: 1,
        memoryFiles: 1,
      });
      expect(JSON.stringify(entry)).not.toContain('zorblaxian');
      expect(await store().listErasures({ tenantId: 'tenant-b' })).toEqual([]);
    });

    it('makes a job that read erased messages lose its summary and its facts', async () => {
      await seed(store(), scopeA, lines);
      const read = await store().getConversation(scopeA);
      await store().eraseMessages(user, { conversationId: scopeA.conversationId, fromSeq: 2, toSeq: 2 }, { now });
      const summary = {
        level: 0,
        fromSeq: 1,
        toSeq: 3,
        content: 'zorblaxian',
        tokens: 1,
        foldedSummaryIds: [],
        summarizer: 'test@1',
        inputTokens: 0,
        outputTokens: 0,
        createdAt: now,
      };
      const stale = store().insertSummary(scopeA, summary, {
        expectedWatermark: 0,
        expectedErasedMessages: read!.erasedMessages ?? 0,
      });
      await expect(stale).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'conflict'));
      await expect(store().insertFact(user, fact('secret', 'zorblaxian', [2]))).rejects.toSatisfy((error: unknown) =>
        isMemoryError(error, 'conflict'),
      );
      expect(await store().listSummaries(scopeA)).toEqual([]);
      expect(await store().listFacts(user)).toEqual([]);
      await expect(store().insertFact(user, fact('secret', 'kept', [2, 3]))).resolves.toMatchObject({ value: 'kept' });
    });

    it('refuses a selection without bounds, a seq range without a conversation, and bad bounds', async () => {
      for (const selection of [
        {},
        { fromSeq: 1 },
        { conversationId: 'conv-1', fromSeq: 3, toSeq: 2 },
        { conversationId: 'conv-1', fromSeq: 0 },
        { before: 'yesterday' },
      ]) {
        await expect(store().eraseMessages(user, selection, { now })).rejects.toSatisfy((error: unknown) =>
          isMemoryError(error, 'invalid_input'),
        );
      }
    });
  });
}

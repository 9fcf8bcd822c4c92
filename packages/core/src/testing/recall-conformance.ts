import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import type { Scope } from '../messages/scope.js';
import { HashedEmbedder } from '../recall/hashed-embedder.js';
import { keywordTerms } from '../recall/keyword-terms.js';
import type { Store } from '../store/store.js';
import { makeNewMessage, scopeA } from './conformance-fixtures.js';

const user = { tenantId: scopeA.tenantId, userId: scopeA.userId };
const embedder = new HashedEmbedder({ dimensions: 64 });

async function seed(
  store: Store,
  scope: Scope,
  contents: readonly string[],
  startMs = Date.UTC(2024, 0, 1),
): Promise<void> {
  await store.appendMessages(
    scope,
    contents.map((content, index) =>
      makeNewMessage(content, { createdAt: new Date(startMs + index * 86_400_000).toISOString() }),
    ),
  );
}

async function embedAll(store: Store, scope: Scope): Promise<void> {
  const pending = await store.listUnembeddedMessages(scope, embedder.model, 1000);
  const vectors = await embedder.embed(pending.map((message) => message.content));
  await store.upsertEmbeddings(
    scope,
    embedder.model,
    pending.map((message, index) => ({ seq: message.seq, vector: vectors[index]! })),
  );
}

/** Recall cases of the store conformance suite: keyword and vector search across a user's conversations, filters, isolation. */
export function describeRecallConformance(store: () => Store): void {
  describe('recall indexes', () => {
    const lines = [
      'The relay on Larch Ridge is called LARCH-RIDGE.',
      'My battery pack holds 10000 mAh.',
      'We hiked to the lookout and saw goats.',
      'The relays were restarted after the storm.',
    ];

    it("finds messages by keyword across the user's conversations, ranked by BM25 with stemming", async () => {
      await seed(store(), scopeA, lines);
      await seed(store(), { ...scopeA, conversationId: 'conv-2' }, ['Tomas carries a spare relay antenna.']);
      const hits = await store().searchKeyword(user, keywordTerms('what is the relay called?'), { k: 10 });
      expect(hits[0]?.message.content).toBe(lines[0]);
      expect(hits.map((hit) => hit.message.content)).toEqual(
        expect.arrayContaining([lines[3], 'Tomas carries a spare relay antenna.']),
      );
      expect(hits.every((hit, index) => index === 0 || hit.score <= hits[index - 1]!.score)).toBe(true);
      expect(hits.find((hit) => hit.message.content.startsWith('Tomas'))?.conversationId).toBe('conv-2');
      expect(await store().searchKeyword(user, keywordTerms('goats'), { k: 10 })).toHaveLength(1);
      expect(await store().searchKeyword(user, ['nothingmatches'], { k: 10 })).toEqual([]);
    });

    it('filters by conversation and time, and honours k', async () => {
      await seed(store(), scopeA, lines);
      await seed(store(), { ...scopeA, conversationId: 'conv-2' }, ['Another relay note.'], Date.UTC(2024, 0, 5));
      const onlyFirst = await store().searchKeyword(user, ['relay'], { k: 10, conversationIds: ['conv-1'] });
      expect(onlyFirst.every((hit) => hit.conversationId === 'conv-1')).toBe(true);
      const late = await store().searchKeyword(user, ['relay'], {
        k: 10,
        since: new Date(Date.UTC(2024, 0, 3)).toISOString(),
      });
      expect(late.map((hit) => hit.message.content)).toEqual(expect.arrayContaining([lines[3], 'Another relay note.']));
      expect(late.map((hit) => hit.message.content)).not.toContain(lines[0]);
      const early = await store().searchKeyword(user, ['relay'], {
        k: 10,
        until: new Date(Date.UTC(2024, 0, 2)).toISOString(),
      });
      expect(early.map((hit) => hit.message.content)).toEqual([lines[0]]);
      expect(await store().searchKeyword(user, ['relay'], { k: 1 })).toHaveLength(1);
    });

    it('stores vectors per model and finds nearest messages by cosine similarity', async () => {
      await seed(store(), scopeA, lines);
      expect(await store().listUnembeddedMessages(scopeA, embedder.model, 10)).toHaveLength(4);
      await embedAll(store(), scopeA);
      expect(await store().listUnembeddedMessages(scopeA, embedder.model, 10)).toEqual([]);
      expect(await store().listUnembeddedMessages(scopeA, 'another-model', 10)).toHaveLength(4);
      const [query] = await embedder.embed(['battery pack mAh']);
      const hits = await store().searchVector(user, embedder.model, query!, { k: 2 });
      expect(hits[0]?.message.content).toBe(lines[1]);
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
      expect(await store().searchVector(user, 'another-model', query!, { k: 2 })).toEqual([]);
      const filtered = await store().searchVector(user, embedder.model, query!, {
        k: 5,
        until: new Date(Date.UTC(2024, 0, 1, 12)).toISOString(),
      });
      expect(filtered.map((hit) => hit.message.seq)).toEqual([1]);
    });

    it('counts the vectors of each model, most first, in one tenant or the whole store', async () => {
      expect(await store().countEmbeddings({})).toEqual([]);
      await seed(store(), scopeA, lines);
      await embedAll(store(), scopeA);
      const other = { ...scopeA, tenantId: 'tenant-b' };
      await seed(store(), other, lines.slice(0, 2));
      const old = new HashedEmbedder({ dimensions: 32 });
      const oldVectors = await old.embed(lines.slice(0, 2));
      await store().upsertEmbeddings(
        other,
        old.model,
        oldVectors.map((vector, index) => ({ seq: index + 1, vector })),
      );
      await store().upsertEmbeddings(scopeA, old.model, [{ seq: 1, vector: oldVectors[0]! }]);
      expect(await store().countEmbeddings({ tenantId: scopeA.tenantId })).toEqual([
        { model: embedder.model, vectors: 4 },
        { model: old.model, vectors: 1 },
      ]);
      expect(await store().countEmbeddings({})).toEqual([
        { model: embedder.model, vectors: 4 },
        { model: old.model, vectors: 3 },
      ]);
      expect(await store().countEmbeddings({ tenantId: 'tenant-c' })).toEqual([]);
      await store().deleteEmbeddings({ tenantId: scopeA.tenantId, exceptModels: [embedder.model] });
      expect(await store().countEmbeddings({ tenantId: scopeA.tenantId })).toEqual([
        { model: embedder.model, vectors: 4 },
      ]);
    });

    it('deletes vectors of other models for a re-embed', async () => {
      await seed(store(), scopeA, lines);
      await embedAll(store(), scopeA);
      expect(await store().deleteEmbeddings({ tenantId: scopeA.tenantId, exceptModels: [embedder.model] })).toBe(0);
      // A second model kept beside it (a refiner's) survives; a third is dropped.
      await store().upsertEmbeddings(scopeA, 'kept@1', [
        { seq: 1, vector: new Float32Array(embedder.dimensions).fill(1) },
      ]);
      await store().upsertEmbeddings(scopeA, 'old@1', [
        { seq: 1, vector: new Float32Array(embedder.dimensions).fill(1) },
      ]);
      expect(
        await store().deleteEmbeddings({ tenantId: scopeA.tenantId, exceptModels: [embedder.model, 'kept@1'] }),
      ).toBe(1);
      expect(await store().listUnembeddedMessages(scopeA, 'kept@1', 10)).toHaveLength(3);
      expect(await store().deleteEmbeddings({ tenantId: scopeA.tenantId, userId: scopeA.userId })).toBe(5);
      expect(await store().listUnembeddedMessages(scopeA, embedder.model, 10)).toHaveLength(4);
    });

    it("lists the messages without a model's vectors among a conversation's newest only", async () => {
      await seed(store(), scopeA, [...lines, 'Fifth line.', 'Sixth line.']);
      await seed(store(), { ...scopeA, conversationId: 'conv-2' }, [...lines, ...lines]);
      const vector = new Float32Array(embedder.dimensions).fill(1);
      await store().upsertEmbeddings(scopeA, 'refiner@1', [
        { seq: 2, vector },
        { seq: 5, vector },
      ]);
      const seqs = async (model: string, among: number, limit: number) =>
        (await store().listUnembeddedNewest(scopeA, model, among, limit)).map((message) => message.seq);
      expect(await seqs('refiner@1', 3, 10)).toEqual([4, 6]);
      expect(await seqs('refiner@1', 3, 1)).toEqual([4]);
      expect(await seqs('refiner@1', 100, 10)).toEqual([1, 3, 4, 6]);
      // A model with no vector at all: every one of the newest.
      expect(await seqs('never@1', 2, 10)).toEqual([5, 6]);
      expect(await store().listUnembeddedNewest({ ...scopeA, conversationId: 'missing' }, 'refiner@1', 3, 10)).toEqual(
        [],
      );
    });

    it('rejects a negative or fractional count of unembedded messages with invalid_input', async () => {
      await seed(store(), scopeA, lines);
      for (const [among, limit, field] of [
        [-1, 10, 'among'],
        [2.5, 10, 'among'],
        [Number.NaN, 10, 'among'],
        [3, -1, 'limit'],
        [3, 1.5, 'limit'],
      ] as const) {
        await expect(store().listUnembeddedNewest(scopeA, 'refiner@1', among, limit)).rejects.toMatchObject({
          code: 'invalid_input',
          details: { field },
        });
      }
      // A negative limit would read every message on SQLite (LIMIT -1 is no limit).
      await expect(store().listUnembeddedMessages(scopeA, 'refiner@1', -1)).rejects.toMatchObject({
        code: 'invalid_input',
        details: { field: 'limit' },
      });
    });

    it("never returns another tenant's or user's messages, and erases vectors with the conversation", async () => {
      await seed(store(), scopeA, lines);
      await embedAll(store(), scopeA);
      const [query] = await embedder.embed(['relay']);
      for (const other of [
        { ...user, tenantId: 'tenant-b' },
        { ...user, userId: 'user-2' },
      ]) {
        expect(await store().searchKeyword(other, ['relay'], { k: 10 })).toEqual([]);
        expect(await store().searchVector(other, embedder.model, query!, { k: 10 })).toEqual([]);
      }
      await store().deleteConversation(scopeA);
      await seed(store(), scopeA, ['fresh start']);
      expect(await store().searchVector(user, embedder.model, query!, { k: 10 })).toEqual([]);
      expect(await store().searchKeyword(user, ['relay'], { k: 10 })).toEqual([]);
    });

    it("returns only the asking user's hits when another user holds many more, closer and better-matching messages", async () => {
      // More of the other user's rows than any candidate pool a store takes (quantized prefilters,
      // pruning thresholds): isolation must hold inside those paths, not only in the final filter.
      const crowd = Array.from({ length: 400 }, (_, index) => `relay battery relay battery report ${index}`);
      const other = { ...scopeA, userId: 'user-crowd', conversationId: 'conv-crowd' };
      await seed(store(), other, crowd);
      await embedAll(store(), other);
      await seed(store(), scopeA, lines);
      await embedAll(store(), scopeA);
      const [query] = await embedder.embed(['relay battery relay battery report 7']);
      const vectorHits = await store().searchVector(user, embedder.model, query!, { k: 3 });
      const keywordHits = await store().searchKeyword(user, keywordTerms('relay battery report'), { k: 3 });
      expect(vectorHits).toHaveLength(3);
      expect(keywordHits.length).toBeGreaterThan(0);
      for (const hit of [...vectorHits, ...keywordHits]) expect(lines).toContain(hit.message.content);
      const crowdHits = await store().searchVector({ ...user, userId: 'user-crowd' }, embedder.model, query!, { k: 3 });
      expect(crowdHits[0]?.message.content).toBe(crowd[7]);
    });

    it('refuses vectors for a message that does not exist', async () => {
      await seed(store(), scopeA, ['one']);
      const [vector] = await embedder.embed(['x']);
      await expect(store().upsertEmbeddings(scopeA, embedder.model, [{ seq: 9, vector: vector! }])).rejects.toSatisfy(
        (error: unknown) => isMemoryError(error, 'not_found'),
      );
    });
  });

  describe('cursors', () => {
    it('moves a named progress mark only from the expected position', async () => {
      await seed(store(), scopeA, ['one']);
      expect(await store().getCursor(scopeA, 'facts')).toBe(0);
      await store().advanceCursor(scopeA, 'facts', 0, 5);
      expect(await store().getCursor(scopeA, 'facts')).toBe(5);
      await expect(store().advanceCursor(scopeA, 'facts', 0, 7)).rejects.toSatisfy((error: unknown) =>
        isMemoryError(error, 'conflict'),
      );
      expect(await store().getCursor(scopeA, 'other')).toBe(0);
      await store().deleteConversation(scopeA);
      expect(await store().getCursor(scopeA, 'facts')).toBe(0);
    });
  });
}

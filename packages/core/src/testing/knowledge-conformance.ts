import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import type { NewFact } from '../facts/fact.js';
import type { Store } from '../store/store.js';
import { scopeA } from './conformance-fixtures.js';

const user = { tenantId: scopeA.tenantId, userId: scopeA.userId };
const is = (code: Parameters<typeof isMemoryError>[1]) => (error: unknown) => isMemoryError(error, code);

function fact(attribute: string, value: string, validFrom: string, overrides: Partial<NewFact> = {}): NewFact {
  return {
    subject: 'user',
    attribute,
    value,
    text: `my ${attribute} is ${value}`,
    confidence: 0.9,
    validFrom,
    sourceConversationId: scopeA.conversationId,
    sourceSeqs: [3],
    extractor: 'test@1',
    createdAt: validFrom,
    ...overrides,
  };
}

/** Fact and entity-graph cases of the store conformance suite: supersession, history, as-of, merge by alias, relations, isolation. */
export function describeKnowledgeConformance(store: () => Store): void {
  describe('facts', () => {
    it('supersedes a fact instead of overwriting it, and answers current, as-of and history queries', async () => {
      const june14 = await store().insertFact(user, fact('trip_date', '14 June', '2025-05-28T10:00:00.000Z'));
      const june21 = await store().insertFact(user, fact('trip_date', '21 June', '2025-06-01T10:00:00.000Z'), {
        supersedes: june14.id,
      });
      await store().insertFact(user, fact('home_town', 'Hood River', '2025-05-28T10:00:00.000Z'));
      expect((await store().listFacts(user)).map((item) => item.value)).toEqual(['21 June', 'Hood River']);
      expect(
        (await store().listFacts(user, { attribute: 'trip_date', asOf: '2025-05-30T00:00:00.000Z' })).map(
          (item) => item.value,
        ),
      ).toEqual(['14 June']);
      const history = await store().listFacts(user, { attribute: 'trip_date', includeHistory: true });
      expect(history.map((item) => [item.value, item.validTo, item.supersededBy])).toEqual([
        ['14 June', '2025-06-01T10:00:00.000Z', june21.id],
        ['21 June', undefined, undefined],
      ]);
      expect(history[1]).toMatchObject({
        sourceSeqs: [3],
        sourceConversationId: scopeA.conversationId,
        extractor: 'test@1',
        confidence: 0.9,
      });
      await expect(
        store().insertFact(user, fact('trip_date', 'x', '2025-06-02T00:00:00.000Z'), { supersedes: june14.id }),
      ).rejects.toSatisfy(is('conflict'));
    });

    it('retires a fact, and refuses unknown or foreign facts', async () => {
      const stored = await store().insertFact(user, fact('likes', 'pizza', '2025-01-01T00:00:00.000Z'));
      await expect(
        store().retireFact({ ...user, userId: 'user-2' }, stored.id, '2025-02-01T00:00:00.000Z'),
      ).rejects.toSatisfy(is('not_found'));
      const retired = await store().retireFact(user, stored.id, '2025-02-01T00:00:00.000Z');
      expect(retired.validTo).toBe('2025-02-01T00:00:00.000Z');
      expect(await store().listFacts(user)).toEqual([]);
      await expect(store().retireFact(user, stored.id, '2025-03-01T00:00:00.000Z')).rejects.toSatisfy(is('conflict'));
      expect(await store().listFacts({ ...user, tenantId: 'tenant-b' }, { includeHistory: true })).toEqual([]);
    });

    it('retires a fact in favour of another of the user (a merge), linking it, and refuses a successor it does not have', async () => {
      const kept = await store().insertFact(user, fact('owns', 'a 10000 mAh power bank', '2025-01-01T00:00:00.000Z'));
      const duplicate = await store().insertFact(user, fact('owns', '10000mAh power bank', '2025-01-02T00:00:00.000Z'));
      const foreign = await store().insertFact(
        { ...user, userId: 'user-2' },
        fact('owns', 'a kayak', '2025-01-02T00:00:00.000Z'),
      );
      await expect(
        store().retireFact(user, duplicate.id, '2025-01-03T00:00:00.000Z', { supersededBy: 'no-such-fact' }),
      ).rejects.toSatisfy(is('not_found'));
      await expect(
        store().retireFact(user, duplicate.id, '2025-01-03T00:00:00.000Z', { supersededBy: foreign.id }),
      ).rejects.toSatisfy(is('not_found'));
      const merged = await store().retireFact(user, duplicate.id, '2025-01-03T00:00:00.000Z', {
        supersededBy: kept.id,
      });
      expect(merged).toMatchObject({ validTo: '2025-01-03T00:00:00.000Z', supersededBy: kept.id });
      expect((await store().listFacts(user)).map((item) => item.id)).toEqual([kept.id]);
    });

    it('keeps when a fact expires, hides it from current listings at and after that time, and keeps it in history', async () => {
      const pass = await store().insertFact(
        user,
        fact('gate_code', '4417', '2025-01-01T00:00:00.000Z', { expiresAt: '2025-01-08T00:00:00.000Z' }),
      );
      const town = await store().insertFact(user, fact('home_town', 'Hood River', '2025-01-01T00:00:00.000Z'));
      expect(pass.expiresAt).toBe('2025-01-08T00:00:00.000Z');
      const current = async (now: string) => (await store().listFacts(user, { now })).map((item) => item.value);
      expect(await current('2025-01-07T23:59:59.999Z')).toEqual(['4417', 'Hood River']);
      expect(await current('2025-01-08T00:00:00.000Z')).toEqual(['Hood River']);
      // Without `now` the store applies no clock; as of a time, a fact expired by then is gone.
      expect((await store().listFacts(user)).map((item) => item.value)).toEqual(['4417', 'Hood River']);
      expect((await store().listFacts(user, { asOf: '2025-01-09T00:00:00.000Z' })).map((item) => item.value)).toEqual([
        'Hood River',
      ]);
      expect((await store().listFacts(user, { includeHistory: true, attribute: 'gate_code' }))[0]).toMatchObject({
        value: '4417',
        expiresAt: '2025-01-08T00:00:00.000Z',
      });
      expect(
        (await store().listFacts(user, { includeHistory: true, attribute: 'gate_code' }))[0]?.validTo,
      ).toBeUndefined();

      const expiring = await store().setFactExpiry(user, town.id, '2025-03-01T00:00:00.000Z');
      expect(expiring).toMatchObject({ id: town.id, expiresAt: '2025-03-01T00:00:00.000Z' });
      expect(await current('2025-03-02T00:00:00.000Z')).toEqual([]);
      const kept = await store().setFactExpiry(user, town.id, undefined);
      expect(kept.expiresAt).toBeUndefined();
      expect(await current('2030-01-01T00:00:00.000Z')).toEqual(['Hood River']);
      await expect(
        store().setFactExpiry({ ...user, userId: 'user-2' }, town.id, '2025-03-01T00:00:00.000Z'),
      ).rejects.toSatisfy(is('not_found'));
      await store().retireFact(user, town.id, '2025-04-01T00:00:00.000Z');
      await expect(store().setFactExpiry(user, town.id, '2025-05-01T00:00:00.000Z')).rejects.toSatisfy(is('conflict'));
    });
  });

  describe('entity graph', () => {
    it('merges an entity met under an alias, and links entities with relations that are not duplicated', async () => {
      const now = '2025-05-28T10:00:00.000Z';
      const relay = await store().upsertEntity(
        user,
        { name: 'LARCH-RIDGE', type: 'device', aliases: ['!5c11e08a'] },
        now,
      );
      const again = await store().upsertEntity(
        user,
        { name: '!5c11e08a', type: 'other', aliases: ['the ridge relay'], description: 'solar relay' },
        now,
      );
      expect(again.id).toBe(relay.id);
      expect(again).toMatchObject({ name: 'LARCH-RIDGE', type: 'device', description: 'solar relay' });
      expect([...again.aliases].sort()).toEqual(['!5c11e08a', 'the ridge relay']);
      const maren = await store().upsertEntity(user, { name: 'Maren', type: 'person' }, now);
      const uses = await store().insertRelation(
        user,
        { subjectId: maren.id, predicate: 'uses_relay', objectId: relay.id, validFrom: now, sourceSeqs: [5] },
        now,
      );
      const same = await store().insertRelation(
        user,
        { subjectId: maren.id, predicate: 'uses_relay', objectId: relay.id, validFrom: now, sourceSeqs: [9] },
        now,
      );
      expect(same.id).toBe(uses.id);
      expect((await store().listEntities(user, { query: 'the ridge' })).map((entity) => entity.id)).toEqual([relay.id]);
      expect((await store().listEntities(user, { ids: [maren.id] })).map((entity) => entity.name)).toEqual(['Maren']);
      expect(
        (await store().listRelations(user, { entityIds: [relay.id] })).map((relation) => relation.predicate),
      ).toEqual(['uses_relay']);
      await store().retireRelation(user, uses.id, '2025-06-01T00:00:00.000Z');
      expect(await store().listRelations(user, { entityIds: [relay.id] })).toEqual([]);
      expect(await store().listRelations(user, { entityIds: [relay.id], includeHistory: true })).toHaveLength(1);
    });

    it('keeps graphs of users apart and erases them with the user', async () => {
      const now = '2025-05-28T10:00:00.000Z';
      const entity = await store().upsertEntity(user, { name: 'Tomas', type: 'person' }, now);
      const other = { ...user, userId: 'user-2' };
      expect(await store().listEntities(other)).toEqual([]);
      const theirs = await store().upsertEntity(other, { name: 'Tomas', type: 'person' }, now);
      expect(theirs.id).not.toBe(entity.id);
      await expect(
        store().insertRelation(
          other,
          { subjectId: theirs.id, predicate: 'knows', objectId: entity.id, validFrom: now, sourceSeqs: [] },
          now,
        ),
      ).rejects.toSatisfy(is('not_found'));
      await store().insertFact(user, fact('name', 'Maren', now));
      await store().deleteUser(user);
      expect(await store().listEntities(user)).toEqual([]);
      expect(await store().listFacts(user, { includeHistory: true })).toEqual([]);
      expect(await store().listEntities(other)).toHaveLength(1);
    });
  });
}

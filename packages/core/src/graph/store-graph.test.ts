import { describe, expect, it } from 'vitest';
import type { UserScope } from '../messages/scope.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import type { ExtractedGraph } from './graph-extractor.js';
import { storeGraph, type StoreGraphContext } from './store-graph.js';

const user: UserScope = { tenantId: 't1', userId: 'maren' };
const context: StoreGraphContext = { conversationId: 'node-7', now: '2025-06-03T04:00:00.000Z' };
const times = new Map([
  [3, '2025-05-29T02:43:12.000Z'],
  [29, '2025-05-30T14:31:18.000Z'],
  [40, '2025-06-02T10:00:00.000Z'],
]);

async function edges(store: InMemoryStore, includeHistory = false): Promise<string[]> {
  const entities = await store.listEntities(user);
  const names = new Map(entities.map((entity) => [entity.id, entity.name]));
  const relations = await store.listRelations(user, { entityIds: entities.map((entity) => entity.id), includeHistory });
  return relations.map(
    (relation) =>
      `${names.get(relation.subjectId)} —${relation.predicate}→ ${names.get(relation.objectId)}${relation.validTo === undefined ? '' : ' (ended)'}`,
  );
}

describe('storeGraph', () => {
  it('upserts entities, resolves relation names by name or alias and stores relations with provenance', async () => {
    const store = new InMemoryStore();
    const graph: ExtractedGraph = {
      entities: [
        { name: 'Maren', type: 'person', aliases: ['user', 'N0CALL'] },
        { name: 'LARCH-RIDGE', type: 'device', aliases: ['!5c11e08a'] },
      ],
      relations: [
        { subject: 'user', predicate: 'uses_relay', object: '!5c11e08a', sourceSeqs: [13] },
        { subject: 'N0CALL', predicate: 'buddy', object: 'Tomas', sourceSeqs: [29] },
      ],
    };
    const stored = await storeGraph(store, user, graph, { ...context, timeOf: (seq) => times.get(seq) });
    expect(stored.entities.map((entity) => `${entity.name}:${entity.type}`)).toEqual([
      'Maren:person',
      'LARCH-RIDGE:device',
      'Tomas:other',
    ]);
    expect(await edges(store)).toEqual(['Maren —uses_relay→ LARCH-RIDGE', 'Maren —buddy→ Tomas']);
    // No time known for seq 13: the relation is valid from `now`; seq 29 has its message time.
    expect(
      stored.relations.map((relation) => [relation.validFrom, relation.sourceSeqs, relation.sourceConversationId]),
    ).toEqual([
      [context.now, [13], 'node-7'],
      [times.get(29), [29], 'node-7'],
    ]);
  });

  it('does not duplicate entities or relations when the same graph is stored twice', async () => {
    const store = new InMemoryStore();
    const graph: ExtractedGraph = {
      entities: [{ name: 'Tomas', type: 'person' }],
      relations: [{ subject: 'user', predicate: 'buddy', object: 'Tomas', sourceSeqs: [29] }],
    };
    const first = await storeGraph(store, user, graph, context);
    const second = await storeGraph(store, user, graph, context);
    expect(second.relations[0]!.id).toBe(first.relations[0]!.id);
    expect((await store.listEntities(user)).map((entity) => entity.name)).toEqual(['Tomas', 'user']);
    expect(await edges(store, true)).toEqual(['user —buddy→ Tomas']);
  });

  it('retires the current relation of a single-valued predicate when the object changes, keeping it in history', async () => {
    const store = new InMemoryStore();
    const lives = (place: string, seq: number): ExtractedGraph => ({
      entities: [{ name: place, type: 'place' }],
      relations: [{ subject: 'Tomas', predicate: 'lives_in', object: place, sourceSeqs: [seq] }],
    });
    await storeGraph(store, user, lives('Bend', 3), { ...context, timeOf: (seq) => times.get(seq) });
    await storeGraph(
      store,
      user,
      { entities: [], relations: [{ subject: 'user', predicate: 'buddy', object: 'Tomas', sourceSeqs: [3] }] },
      context,
    );
    const moved = await storeGraph(store, user, lives('Portland', 40), { ...context, timeOf: (seq) => times.get(seq) });
    expect(moved.retired.map((relation) => relation.validTo)).toEqual([times.get(40)]);
    expect(await edges(store)).toEqual(['user —buddy→ Tomas', 'Tomas —lives_in→ Portland']);
    expect(await edges(store, true)).toEqual([
      'Tomas —lives_in→ Bend (ended)',
      'user —buddy→ Tomas',
      'Tomas —lives_in→ Portland',
    ]);
    // An older statement read late does not bring Bend back.
    const stale = await storeGraph(store, user, lives('Bend', 29), { ...context, timeOf: (seq) => times.get(seq) });
    expect(stale.relations).toEqual([]);
    expect(await edges(store)).toEqual(['user —buddy→ Tomas', 'Tomas —lives_in→ Portland']);
  });

  it('keeps accumulating a multi-valued predicate', async () => {
    const store = new InMemoryStore();
    const relations = ['LARCH-RIDGE', 'BEAR-BUTTE'].map((relay, index) => ({
      subject: 'user',
      predicate: 'uses_relay',
      object: relay,
      sourceSeqs: [index + 1],
    }));
    const stored = await storeGraph(store, user, { entities: [], relations }, context);
    expect(stored.retired).toEqual([]);
    expect(await edges(store)).toEqual(['user —uses_relay→ LARCH-RIDGE', 'user —uses_relay→ BEAR-BUTTE']);
  });

  it('turns alias_of into an alias instead of an edge, and skips self-loops', async () => {
    const store = new InMemoryStore();
    const graph: ExtractedGraph = {
      entities: [{ name: 'LARCH-RIDGE', type: 'device' }],
      relations: [
        { subject: '!5c11e08a', predicate: 'alias_of', object: 'LARCH-RIDGE', sourceSeqs: [13] },
        { subject: '!5c11e08a', predicate: 'same_as', object: 'LARCH-RIDGE', sourceSeqs: [13] },
      ],
    };
    const stored = await storeGraph(store, user, graph, context);
    expect(stored.relations).toEqual([]);
    expect((await store.listEntities(user)).map((entity) => [entity.name, entity.aliases])).toEqual([
      ['LARCH-RIDGE', ['!5c11e08a']],
    ]);
  });

  it('writes only into the given user and tenant', async () => {
    const store = new InMemoryStore();
    await storeGraph(
      store,
      user,
      {
        entities: [{ name: 'Tomas', type: 'person' }],
        relations: [{ subject: 'user', predicate: 'buddy', object: 'Tomas', sourceSeqs: [1] }],
      },
      context,
    );
    expect(await store.listEntities({ ...user, userId: 'tomas' })).toEqual([]);
    expect(await store.listEntities({ ...user, tenantId: 't2' })).toEqual([]);
  });
});

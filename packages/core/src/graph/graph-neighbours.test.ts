import { beforeEach, describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import type { UserScope } from '../messages/scope.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { graphNeighbours } from './graph-neighbours.js';
import { storeGraph } from './store-graph.js';

const user: UserScope = { tenantId: 't1', userId: 'maren' };
const now = '2025-06-03T04:00:00.000Z';
let store: InMemoryStore;

// Maren —buddy→ Tomas —has_node→ !7be104c2 ; Tomas —lives_in→ Bend (ended) → Portland ; Maren —uses_relay→ LARCH-RIDGE —located_at→ Larch Mtn
beforeEach(async () => {
  store = new InMemoryStore();
  const context = { conversationId: 'node-7', now };
  await storeGraph(
    store,
    user,
    {
      entities: [
        { name: 'Maren', type: 'person', aliases: ['user', 'N0CALL'] },
        { name: 'LARCH-RIDGE', type: 'device', aliases: ['!5c11e08a'] },
      ],
      relations: [
        { subject: 'user', predicate: 'buddy', object: 'Tomas', sourceSeqs: [1] },
        { subject: 'Tomas', predicate: 'has_node', object: '!7be104c2', sourceSeqs: [1] },
        { subject: 'Tomas', predicate: 'lives_in', object: 'Bend', sourceSeqs: [1] },
        { subject: 'user', predicate: 'uses_relay', object: 'LARCH-RIDGE', sourceSeqs: [2] },
        { subject: 'LARCH-RIDGE', predicate: 'located_at', object: 'Larch Mtn', sourceSeqs: [2] },
      ],
    },
    { ...context, now: '2025-05-29T00:00:00.000Z' },
  );
  await storeGraph(
    store,
    user,
    { entities: [], relations: [{ subject: 'Tomas', predicate: 'lives_in', object: 'Portland', sourceSeqs: [3] }] },
    context,
  );
});

const names = (result: Awaited<ReturnType<typeof graphNeighbours>>) => result.entities.map((entity) => entity.name);

describe('graphNeighbours', () => {
  it('returns the start entity and its direct neighbours when depth is 1', async () => {
    const result = await graphNeighbours(store, user, 'Maren', 1);
    expect(names(result)).toEqual(['Maren', 'Tomas', 'LARCH-RIDGE']);
    expect(result.relations.map((relation) => relation.predicate)).toEqual(['buddy', 'uses_relay']);
  });

  it('walks breadth-first in both directions up to depth, over current relations only', async () => {
    const result = await graphNeighbours(store, user, 'Tomas', 2);
    expect(names(result)).toEqual(['Tomas', 'Maren', '!7be104c2', 'Portland', 'LARCH-RIDGE']);
    expect(names(await graphNeighbours(store, user, 'Tomas', 3))).toEqual([
      'Tomas',
      'Maren',
      '!7be104c2',
      'Portland',
      'LARCH-RIDGE',
      'Larch Mtn',
    ]);
  });

  it('includes ended relations and what they reach when includeHistory is set', async () => {
    const result = await graphNeighbours(store, user, 'Tomas', 1, { includeHistory: true });
    expect(names(result)).toEqual(['Tomas', 'Maren', '!7be104c2', 'Bend', 'Portland']);
    expect(
      result.relations.find((relation) => relation.predicate === 'lives_in' && relation.validTo !== undefined),
    ).toBeDefined();
  });

  it('finds the start by id, by alias and case-insensitively', async () => {
    const [relay] = await store.listEntities(user, { query: 'LARCH-RIDGE' });
    for (const key of [relay!.id, '!5c11e08a', 'larch-ridge']) {
      expect(names(await graphNeighbours(store, user, key, 1))).toEqual(['LARCH-RIDGE', 'Maren', 'Larch Mtn']);
    }
    expect(names(await graphNeighbours(store, user, 'user', 1))[0]).toBe('Maren');
  });

  it('throws not_found for an unknown entity or another user, and invalid_input for a depth outside 1–3', async () => {
    await expect(graphNeighbours(store, user, 'Ines', 1)).rejects.toSatisfy((error) =>
      isMemoryError(error, 'not_found'),
    );
    await expect(graphNeighbours(store, { ...user, userId: 'tomas' }, 'Maren', 1)).rejects.toSatisfy((error) =>
      isMemoryError(error, 'not_found'),
    );
    for (const depth of [0, 4, 1.5]) {
      await expect(graphNeighbours(store, user, 'Maren', depth)).rejects.toSatisfy((error) =>
        isMemoryError(error, 'invalid_input'),
      );
    }
  });
});

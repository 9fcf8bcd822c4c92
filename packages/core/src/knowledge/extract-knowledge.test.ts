import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isMemoryError, MemoryError } from '../errors/memory-error.js';
import { HeuristicGraphExtractor } from '../graph/heuristic-graph-extractor.js';
import type { GraphExtractor } from '../graph/graph-extractor.js';
import type { MessageRole, NewMessage } from '../messages/message.js';
import type { Scope } from '../messages/scope.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { extractKnowledge, knowledgeBatchSize, knowledgeCursorName } from './extract-knowledge.js';
import type { FactExtractionInput, FactExtractor } from '../facts/fact-extractor.js';
import { HeuristicFactExtractor } from '../facts/heuristic-fact-extractor.js';
import { normalizeFactValue } from '../facts/normalize-fact-value.js';

const scope: Scope = { tenantId: 't1', userId: 'maren', conversationId: 'node-7' };
const user = { tenantId: scope.tenantId, userId: scope.userId };
const now = () => Date.UTC(2025, 5, 10);

function newMessage(role: MessageRole, content: string, createdAt: string): NewMessage {
  return {
    role,
    content,
    name: undefined,
    toolCalls: undefined,
    toolCallId: undefined,
    createdAt,
    metadata: undefined,
    idempotencyKey: undefined,
    tokens: 10,
  };
}

async function append(store: InMemoryStore, contents: readonly string[], startMinute = 0): Promise<void> {
  await store.appendMessages(
    scope,
    contents.map((content, index) =>
      newMessage('user', content, new Date(Date.UTC(2025, 4, 1, 0, startMinute + index)).toISOString()),
    ),
  );
}

/** A fact extractor that records what it was given and can fail or act as a racing worker on a chosen call. */
function recording(
  inner: FactExtractor,
  onCall?: (call: number, input: FactExtractionInput) => Promise<void>,
): FactExtractor & { calls: FactExtractionInput[] } {
  const calls: FactExtractionInput[] = [];
  return {
    id: inner.id,
    calls,
    async extract(input) {
      calls.push(input);
      await onCall?.(calls.length, input);
      return inner.extract(input);
    },
  };
}

describe('extractKnowledge', () => {
  it('extracts the mesh-radio conversation into current facts with history and a graph', async () => {
    const store = new InMemoryStore();
    const lines = readFileSync(new URL('../../../../examples/mesh-radio-node-7.jsonl', import.meta.url), 'utf8')
      .trim()
      .split('\n');
    const records = lines.map((line) => JSON.parse(line) as { role: MessageRole; content: string; createdAt: string });
    await store.appendMessages(
      scope,
      records.map((record) => newMessage(record.role, record.content, new Date(record.createdAt).toISOString())),
    );

    const result = await extractKnowledge(
      { store, factExtractor: new HeuristicFactExtractor(), graphExtractor: new HeuristicGraphExtractor(), now },
      scope,
    );
    expect(result).toMatchObject({
      rounds: 1,
      messagesRead: records.length,
      throughSeq: records.length,
      raced: false,
      factsSuperseded: 1,
    });

    const current = await store.listFacts(user, { subject: 'user' });
    const valueOf = (attribute: string) =>
      current.filter((fact) => fact.attribute === attribute).map((fact) => fact.value);
    expect(valueOf('name')).toEqual(['Maren']);
    expect(valueOf('callsign')).toEqual(['N0CALL']);
    expect(valueOf('node_id')).toEqual(['!a3f9c2d1']);
    expect(valueOf('home_town')).toEqual(['Hood River']);
    expect(valueOf('buddy')).toEqual(['Tomas']);
    expect(valueOf('trip_date').map(normalizeFactValue)).toEqual(['21 june']);

    const trip = await store.listFacts(user, { attribute: 'trip_date', includeHistory: true });
    expect(trip.map((fact) => [normalizeFactValue(fact.value), fact.sourceSeqs])).toEqual([
      ['14 june', [7]],
      ['21 june', [35]],
    ]);
    expect(trip[0]).toMatchObject({
      validTo: trip[1]!.validFrom,
      supersededBy: trip[1]!.id,
      text: 'planning the Timberline Trail loop around Mt Hood, starting June 14.',
    });
    expect(trip[1]!.validFrom).toBe(new Date(records[34]!.createdAt).toISOString());
    const before = await store.listFacts(user, { attribute: 'trip_date', asOf: '2025-05-31T00:00:00.000Z' });
    expect(before.map((fact) => normalizeFactValue(fact.value))).toEqual(['14 june']);

    const entities = await store.listEntities(user);
    const byName = new Map(entities.map((entity) => [entity.name, entity]));
    expect(byName.get('LARCH-RIDGE')).toMatchObject({ type: 'device', aliases: ['!5c11e08a'] });
    expect(byName.get('Maren')!.aliases).toEqual(expect.arrayContaining(['user', 'N0CALL']));
    const fromMaren = await store.listRelations(user, { entityIds: [byName.get('Maren')!.id] });
    const named = (id: string) => entities.find((entity) => entity.id === id)!.name;
    expect(fromMaren.map((relation) => `${relation.predicate} ${named(relation.objectId)}`)).toEqual(
      expect.arrayContaining(['buddy Tomas', 'uses_relay LARCH-RIDGE', 'partner Ines', 'home_town Hood River']),
    );

    const again = await extractKnowledge(
      { store, factExtractor: new HeuristicFactExtractor(), graphExtractor: new HeuristicGraphExtractor(), now },
      scope,
    );
    expect(again).toMatchObject({ rounds: 0, messagesRead: 0, throughSeq: records.length });
  });

  it('reads in rounds of at most 200 messages and only what follows the cursor', async () => {
    const store = new InMemoryStore();
    await append(
      store,
      Array.from({ length: 450 }, (_, index) => (index === 420 ? 'I live in Bend.' : `note ${index}`)),
    );
    const extractor = recording(new HeuristicFactExtractor());
    const first = await extractKnowledge({ store, factExtractor: extractor, now }, scope);
    expect(extractor.calls.map((call) => call.messages.length)).toEqual([knowledgeBatchSize, knowledgeBatchSize, 50]);
    expect(first).toMatchObject({ rounds: 3, messagesRead: 450, throughSeq: 450, factsAdded: 1 });
    expect(await store.getCursor(scope, knowledgeCursorName('heuristic@1'))).toBe(450);

    await append(store, ['I love sourdough.'], 500);
    const second = await extractKnowledge({ store, factExtractor: extractor, now }, scope);
    expect(extractor.calls.at(-1)!.messages.map((message) => message.seq)).toEqual([451]);
    expect(extractor.calls.at(-1)!.knownFacts.map((fact) => fact.value)).toEqual(['Bend']);
    expect(second).toMatchObject({ rounds: 1, messagesRead: 1, throughSeq: 451, factsAdded: 1 });
  });

  it('stops without error when another worker moved the cursor first', async () => {
    const store = new InMemoryStore();
    await append(store, ['I live in Bend.', 'I love hiking.']);
    const extractor = recording(new HeuristicFactExtractor(), async (call) => {
      if (call === 1) await store.advanceCursor(scope, knowledgeCursorName('heuristic@1'), 0, 2);
    });
    const result = await extractKnowledge({ store, factExtractor: extractor, now }, scope);
    expect(result).toMatchObject({ raced: true, rounds: 1, throughSeq: 0 });
    expect(extractor.calls).toHaveLength(1);
    // The racing worker's facts and ours are the same statements: stored once.
    expect((await store.listFacts(user)).map((fact) => fact.value)).toEqual(['Bend', 'hiking']);
  });

  it('throws an extractor failure and leaves the cursor, so a retry reads the same messages without duplicating facts', async () => {
    const store = new InMemoryStore();
    await append(store, ['I live in Bend.', 'my buddy Tomas lives in Salem.']);
    let failing = true;
    const graphExtractor: GraphExtractor = {
      id: 'flaky@1',
      async extract(input) {
        if (failing) throw new MemoryError('model_failed', 'graph model timed out');
        return new HeuristicGraphExtractor().extract(input);
      },
    };
    const factExtractor = new HeuristicFactExtractor();
    await expect(extractKnowledge({ store, factExtractor, graphExtractor, now }, scope)).rejects.toSatisfy((error) =>
      isMemoryError(error, 'model_failed'),
    );
    expect(await store.getCursor(scope, knowledgeCursorName(factExtractor.id))).toBe(0);
    expect(await store.listFacts(user)).toHaveLength(3);

    failing = false;
    const retry = await extractKnowledge({ store, factExtractor, graphExtractor, now }, scope);
    expect(retry).toMatchObject({ factsAdded: 0, factsIgnored: 3, throughSeq: 2 });
    expect(await store.listFacts(user, { includeHistory: true })).toHaveLength(3);
    expect((await store.listEntities(user)).map((entity) => entity.name)).toEqual(
      expect.arrayContaining(['Tomas', 'Salem', 'Bend']),
    );
  });

  it('stops when its signal is aborted, before reading anything', async () => {
    const store = new InMemoryStore();
    await append(store, ['I live in Bend.']);
    const controller = new AbortController();
    controller.abort();
    await expect(
      extractKnowledge({ store, factExtractor: new HeuristicFactExtractor(), now }, scope, {
        signal: controller.signal,
      }),
    ).rejects.toThrow();
    expect(await store.listFacts(user)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { createMemory } from '../engine/create-memory.js';
import { isMemoryError } from '../errors/memory-error.js';
import type { Message } from '../messages/message.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { HashedEmbedder } from './hashed-embedder.js';
import { fuse } from './recall.js';
import type { SearchHit } from './search.js';

function hit(seq: number, score: number, createdAt = `2024-01-0${seq}T00:00:00.000Z`): SearchHit {
  const message = { id: `m${seq}`, seq, role: 'user', content: `m${seq}`, createdAt, tokens: 1 } as Message;
  return { conversationId: 'c', message, score };
}

describe('fuse', () => {
  it('ranks messages both retrievers found above those only one found, with each rank explained', () => {
    const fused = fuse([hit(1, 9), hit(2, 5), hit(3, 1)], [hit(4, 0.9), hit(3, 0.8), hit(1, 0.1)]);
    expect(fused.map((item) => item.message.seq)).toEqual([1, 3, 4, 2]);
    expect(fused[0]!.explain).toMatchObject({ keywordRank: 1, keywordScore: 9, vectorRank: 3, vectorSimilarity: 0.1 });
    expect(fused[0]!.explain.fused).toBeCloseTo(1 / 61 + 1 / 63);
    expect(fused[3]!.explain.vectorRank).toBeUndefined();
    expect(fused[2]!.explain.keywordRank).toBeUndefined();
  });

  it('breaks a tie between equal fused scores by recency', () => {
    const fused = fuse([hit(1, 5)], [hit(2, 0.5)]);
    expect(fused.map((item) => item.message.seq)).toEqual([2, 1]);
    expect(fused[0]!.explain.recency).toBe(1);
    expect(fused[1]!.explain.recency).toBe(0);
  });
});

describe('recall', () => {
  const user = { userId: 'maren' };
  const lines = [
    'My relay is called LARCH-RIDGE.',
    'The weather was nice.',
    'I bought a 10000 mAh power bank for the trip.',
    'Tomas is my hiking buddy.',
    'ok thanks',
  ];

  it('finds old messages across conversations by keyword and by vector, with neighbours', async () => {
    const memory = createMemory({
      store: new InMemoryStore(),
      embedder: new HashedEmbedder(),
      worker: { autoStart: false },
    });
    for (const [index, content] of lines.entries()) {
      await memory.append({ ...user, conversationId: index < 3 ? 'trip' : 'chat' }, [
        { role: 'user', content },
        { role: 'assistant', content: `noted ${index}` },
      ]);
    }
    expect(await memory.runPendingJobs()).toBeGreaterThan(0);
    const [first] = await memory.recall(user, 'what is the name of my relay?', { k: 3, neighbours: 1 });
    expect(first?.message.content).toBe(lines[0]);
    expect(first?.conversationId).toBe('trip');
    expect(first?.explain.keywordRank).toBe(1);
    expect(first?.explain.vectorRank).toBeDefined();
    expect(first?.neighbours?.map((message) => message.content)).toEqual(['noted 0']);
    const buddy = await memory.recall(user, 'buddy', { k: 5, conversations: ['trip'] });
    expect(buddy.every((item) => item.conversationId === 'trip')).toBe(true);
  });

  it('finds a message that shares no word with the query but with the first hit when the second hop is on', async () => {
    const memory = createMemory({ store: new InMemoryStore(), worker: { autoStart: false } });
    const chat = [
      'My new relay is on Hemlock Ridge.',
      'The weather was nice.',
      'Hemlock Ridge gets snow in March.',
      'ok thanks',
    ];
    await memory.append(
      { ...user, conversationId: 'c' },
      chat.map((content) => ({ role: 'user' as const, content })),
    );
    const contents = async (secondHopWeight: number) =>
      (await memory.recall(user, 'where is my relay?', { k: 3, tuning: { secondHopWeight } })).map(
        (hit) => hit.message.content,
      );
    expect(await contents(0)).toEqual([chat[0]]);
    const withSecondHop = await memory.recall(user, 'where is my relay?', { k: 3, tuning: { secondHopWeight: 1 } });
    expect(withSecondHop.map((hit) => hit.message.content)).toEqual([chat[0], chat[2]]);
    expect(withSecondHop[1]!.explain.secondHopRank).toBeDefined();
  });

  it('works keyword-only without an embedder and rejects a blank query', async () => {
    const memory = createMemory({ store: new InMemoryStore(), worker: { autoStart: false } });
    await memory.append(
      { ...user, conversationId: 'c' },
      lines.map((content) => ({ role: 'user' as const, content })),
    );
    const hits = await memory.recall(user, 'power bank', { k: 2 });
    expect(hits[0]?.message.content).toBe(lines[2]);
    expect(hits[0]?.explain.vectorRank).toBeUndefined();
    await expect(memory.recall(user, '   ')).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'invalid_input'),
    );
    await expect(memory.recall({ userId: 'someone-else' }, 'power bank')).resolves.toEqual([]);
  });
});

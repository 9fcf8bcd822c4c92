import { describe, expect, it } from 'vitest';
import { defaultRecallK } from '../context/build-context.js';
import { createMemory } from '../engine/create-memory.js';
import type { Message } from '../messages/message.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { embeddingText } from '../jobs/embed-conversation.js';
import { HashedEmbedder } from './hashed-embedder.js';
import { recallTuning } from './recall.js';
import { speakerTerms } from './speaker-terms.js';

const user = { userId: 'ava' };

function message(seq: number, content: string, name?: string): Message {
  return {
    id: `m${seq}`,
    seq,
    role: 'user',
    content,
    name,
    toolCalls: undefined,
    toolCallId: undefined,
    createdAt: '2024-01-01T00:00:00.000Z',
    metadata: undefined,
    idempotencyKey: undefined,
    tokens: 1,
  };
}

describe('recall ranking', () => {
  it('matches a speaker named in the query against who spoke, not against the text', async () => {
    const memory = createMemory({ store: new InMemoryStore(), worker: { autoStart: false }, compaction: false });
    await memory.append({ ...user, conversationId: 'c' }, [
      { role: 'user', name: 'Ava', content: 'I painted a lighthouse at sunrise.' },
      { role: 'assistant', name: 'Ben', content: 'Ava, Ava, your painting of the lighthouse is lovely, Ava!' },
      { role: 'assistant', name: 'Ben', content: 'I painted the harbour last week.' },
    ]);

    const hits = await memory.recall(user, 'What did Ava paint?', { k: 3 });

    // Without the speaker rule, the message that says "Ava" three times would win on BM25.
    expect(hits[0]?.message.content).toBe('I painted a lighthouse at sunrise.');
    expect(hits[0]?.explain.speaker).toBe(true);
    expect(hits.find((hit) => hit.message.seq === 3)?.explain.speaker).toBeUndefined();
  });

  it('gives a candidate a share of its best neighbour’s score, so an answer rises with its question', async () => {
    const memory = createMemory({ store: new InMemoryStore(), worker: { autoStart: false }, compaction: false });
    await memory.append({ ...user, conversationId: 'c' }, [
      { role: 'assistant', content: 'How was the island trip?' },
      { role: 'user', content: 'Amazing, we saw a whale near the island.' },
      { role: 'assistant', content: 'A whale, really?' },
      { role: 'user', content: 'The island ferry was late on Monday.' },
    ]);

    // The share alone: no session coverage, second hop or exchange share on top of the fused score.
    const hits = await memory.recall(user, 'island trip whale', {
      k: 4,
      tuning: { episodeCoverage: 0, secondHopWeight: 0, exchangeShare: 0 },
    });
    const second = hits.find((hit) => hit.message.seq === 2)!;

    expect(second.explain.neighbour).toBeGreaterThan(0);
    expect(second.score).toBeCloseTo(
      (second.explain.fused + second.explain.neighbour! + (second.explain.episode ?? 0)) * (second.explain.own ?? 1),
    );
    const best = Math.max(
      ...hits.filter((hit) => hit.message.seq === 1 || hit.message.seq === 3).map((hit) => hit.explain.fused),
    );
    expect(second.explain.neighbour).toBeCloseTo(recallTuning.neighbourShare * best);
    expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a));
  });

  it('embeds each message with the one before it, so a short reply is found by what it answers', async () => {
    const store = new InMemoryStore();
    const memory = createMemory({
      store,
      embedder: new HashedEmbedder(),
      worker: { autoStart: false },
      compaction: false,
    });
    await memory.append({ ...user, conversationId: 'c' }, [
      { role: 'assistant', name: 'Ben', content: 'Did you ever go diving at the coral reef?' },
      { role: 'user', name: 'Ava', content: 'Yes, twice last summer!' },
      { role: 'assistant', name: 'Ben', content: 'Shall we plan the budget for next month?' },
      { role: 'user', name: 'Ava', content: 'Sure, send me a draft.' },
    ]);
    await memory.runPendingJobs();

    const hits = await memory.recall(user, 'coral reef diving', { k: 4 });

    expect(hits.find((hit) => hit.message.seq === 2)?.explain.vectorRank).toBeLessThan(
      hits.find((hit) => hit.message.seq === 4)!.explain.vectorRank!,
    );
  });
});

describe('embeddingText', () => {
  it('puts the previous message and the speaker names before the text', () => {
    expect(embeddingText(message(2, 'Yes, twice!', 'Ava'), message(1, 'Been diving?', 'Ben'))).toBe(
      'Ben: Been diving?\nAva: Yes, twice!',
    );
    expect(embeddingText(message(1, 'Hello', 'Ava'))).toBe('Ava: Hello');
    expect(embeddingText(message(2, 'Fine.'), message(1, 'How are you?'))).toBe('How are you?\nFine.');
  });

  it('cuts a long previous message to 500 characters', () => {
    const text = embeddingText(message(2, 'ok'), message(1, 'x'.repeat(2000)));

    expect(text).toBe(`${'x'.repeat(500)}…\nok`);
  });
});

describe('speakerTerms', () => {
  it('keeps the query terms that are a word of some candidate speaker name', () => {
    const hits = [message(1, 'hi', 'Mary-Ann Smith'), message(2, 'hello', 'Bob'), message(3, 'no name')].map(
      (item) => ({
        conversationId: 'c',
        message: item,
        score: 1,
      }),
    );

    expect(speakerTerms(['ann', 'bob', 'painting', 'smith'], hits)).toEqual(new Set(['ann', 'bob', 'smith']));
    expect(speakerTerms(['painting'], hits)).toEqual(new Set());
  });
});

describe('defaultRecallK', () => {
  it('recalls one message per 64 tokens of budget, 8 to 100', () => {
    expect([100, 1000, 2000, 4000, 1_000_000].map(defaultRecallK)).toEqual([8, 16, 31, 63, 100]);
  });

  it('lets a hybrid context hold more than 8 recalled messages when its budget has room', async () => {
    const memory = createMemory({ store: new InMemoryStore(), worker: { autoStart: false }, compaction: false });
    const old = Array.from({ length: 60 }, (_, index) => ({
      role: 'user' as const,
      content: `Relay check ${index}: the ridge relay answered on channel ${index % 7}.`,
    }));
    const filler = Array.from({ length: 200 }, (_, index) => ({
      role: 'assistant' as const,
      content: `Weather note ${index}: clear skies and light wind over the valley today.`,
    }));
    await memory.append({ ...user, conversationId: 'c' }, [
      ...old,
      ...filler,
      { role: 'user', content: 'Which channels did the ridge relay answer on?' },
    ]);

    const { report } = await memory.buildContext(
      { ...user, conversationId: 'c' },
      { policy: 'hybrid', maxTokens: 4000 },
    );

    expect(report.parts.find((part) => part.kind === 'recalled')?.items?.length).toBeGreaterThan(8);
    expect(report.sentTokens).toBeLessThanOrEqual(4000);
  });
});

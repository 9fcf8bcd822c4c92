import { describe, expect, it } from 'vitest';
import { createMemory } from '../engine/create-memory.js';
import type { Memory } from '../engine/memory.js';
import { isMemoryError } from '../errors/memory-error.js';
import type { MessageInput } from '../messages/message.js';
import { InMemoryStore } from '../testing/in-memory-store.js';

const scope = { conversationId: 'node-7' };

function chat(turns: number, words = 5): MessageInput[] {
  return Array.from({ length: turns * 2 }, (_, index) => ({
    role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `message ${index + 1} ` + 'word '.repeat(words),
  }));
}

async function memoryWith(messages: readonly MessageInput[]): Promise<Memory> {
  const memory = createMemory({ store: new InMemoryStore() });
  await memory.append(scope, messages);
  return memory;
}

function recount(memory: Memory, messages: readonly Parameters<Memory['tokenCounter']['countMessage']>[0][]): number {
  return messages.reduce(
    (sum, message) => sum + memory.tokenCounter.countMessage(message),
    memory.tokenCounter.requestOverheadTokens,
  );
}

describe('buildContext', () => {
  it('sends everything and saves nothing with the full policy when the history fits', async () => {
    const memory = await memoryWith(chat(5));
    const { messages, report } = await memory.buildContext(scope, {
      policy: 'full',
      maxTokens: 10_000,
      system: 'You are a radio bot.',
    });
    expect(messages).toHaveLength(11);
    expect(messages[0]).toEqual({ role: 'system', content: 'You are a radio bot.' });
    expect(report.sentTokens).toBe(report.fullHistoryTokens);
    expect(report.savedPercent).toBe(0);
    expect(report.dropped).toEqual([]);
    expect(report.sentTokens).toBe(recount(memory, messages));
  });

  it('keeps the last N turns with the window policy and reports the rest as outside the window', async () => {
    const memory = await memoryWith(chat(10));
    const { messages, report } = await memory.buildContext(scope, {
      policy: 'window',
      windowTurns: 3,
      maxTokens: 10_000,
    });
    expect(messages.map((message) => message.content.split(' ')[1])).toEqual(['15', '16', '17', '18', '19', '20']);
    expect(report.parts).toEqual([
      { kind: 'recent', tokens: expect.any(Number) as unknown, messageCount: 6, seqRange: { from: 15, to: 20 } },
    ]);
    expect(report.dropped).toEqual([
      {
        seqRange: { from: 1, to: 14 },
        messageCount: 14,
        tokens: expect.any(Number) as unknown,
        reason: 'outside_window',
      },
    ]);
    expect(report.savedTokens).toBe(report.fullHistoryTokens - report.sentTokens);
    expect(report.savedPercent).toBeGreaterThan(60);
  });

  it('takes the newest whole turns that fit with the token-window policy', async () => {
    const memory = await memoryWith(chat(20));
    const turnTokens = (await memory.listMessages(scope)).slice(-2).reduce((sum, message) => sum + message.tokens, 0);
    const maxTokens = 3 + turnTokens * 4 + Math.floor(turnTokens / 2);
    const { messages, report } = await memory.buildContext(scope, { policy: 'token-window', maxTokens });
    expect(messages).toHaveLength(8);
    expect(messages[0]?.role).toBe('user');
    expect(report.sentTokens).toBeLessThanOrEqual(maxTokens);
    expect(report.dropped).toEqual([
      { seqRange: { from: 1, to: 32 }, messageCount: 32, tokens: expect.any(Number) as unknown, reason: 'over_budget' },
    ]);
  });

  it('never separates a tool call from its results', async () => {
    const memory = createMemory({ store: new InMemoryStore() });
    await memory.append(scope, [
      { role: 'user', content: 'weather at the relay?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"site":"relay"}' } },
          { id: 'c2', type: 'function', function: { name: 'battery', arguments: '{}' } },
        ],
      },
      { role: 'tool', toolCallId: 'c1', content: 'rain, 4 C, wind 30 km/h '.repeat(5) },
      { role: 'tool', toolCallId: 'c2', content: 'battery 71%' },
      { role: 'assistant', content: 'Rain and 4 C at the relay; battery 71%.' },
    ]);
    const all = await memory.listMessages(scope);
    const lastTwo = all[3]!.tokens + all[4]!.tokens + 3;
    // Room for the final answer and one tool result, but not the whole call group: the group goes whole.
    const { messages } = await memory.buildContext(scope, { policy: 'full', maxTokens: lastTwo + 2 });
    expect(messages.map((message) => message.role)).toEqual(['assistant']);
    const roomy = await memory.buildContext(scope, { policy: 'full', maxTokens: 10_000 });
    expect(roomy.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
  });

  it('truncates a single message larger than the budget with a marker and reports it', async () => {
    const memory = await memoryWith([{ role: 'user', content: 'log line with data '.repeat(2000) }]);
    const { messages, report } = await memory.buildContext(scope, { policy: 'token-window', maxTokens: 200 });
    expect(messages).toHaveLength(1);
    expect(messages[0]?.content).toMatch(
      /\[mnemo: message truncated to fit the context budget; \d+ of \d+ content tokens kept\]$/,
    );
    expect(report.truncated).toEqual([
      { seq: 1, originalTokens: expect.any(Number) as unknown, keptTokens: expect.any(Number) as unknown },
    ]);
    expect(report.sentTokens).toBe(recount(memory, messages));
    expect(report.sentTokens).toBeLessThanOrEqual(200);
    expect(report.sentTokens).toBeGreaterThan(150);
  });

  it('fails with budget_exceeded when the system prompt alone does not fit', async () => {
    const memory = await memoryWith(chat(1));
    await expect(
      memory.buildContext(scope, { maxTokens: 10, system: 'a very long system prompt '.repeat(10) }),
    ).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'budget_exceeded'));
  });

  it('rejects an unknown policy and a non-integer budget as invalid input', async () => {
    const memory = await memoryWith(chat(1));
    for (const options of [{ policy: 'everything' }, { maxTokens: 0 }, { maxTokens: 1.5 }, { windowTurns: -1 }]) {
      await expect(memory.buildContext(scope, options as never)).rejects.toSatisfy((error: unknown) =>
        isMemoryError(error, 'invalid_input'),
      );
    }
  });

  it('reads only the tail of a long conversation', async () => {
    const store = new InMemoryStore();
    // No background worker: its extraction job reads messages too, and only the context build's reads are counted.
    const memory = createMemory({ store, compaction: false, worker: { autoStart: false } });
    await memory.append(scope, chat(1000, 2));
    const reads: number[] = [];
    const listMessages = store.listMessages.bind(store);
    store.listMessages = async (...args) => {
      const page = await listMessages(...args);
      reads.push(page.length);
      return page;
    };
    const { report } = await memory.buildContext(scope, { policy: 'token-window', maxTokens: 500 });
    expect(reads.reduce((sum, count) => sum + count, 0)).toBeLessThan(300);
    expect(report.dropped[0]?.seqRange.from).toBe(1);
    expect(report.fullHistoryTokens).toBe(
      (await store.getConversation({ tenantId: 'default', userId: 'default', conversationId: 'node-7' }))!.totalTokens +
        3,
    );
  });

  it('records each build in the usage ledger and not for an unknown conversation', async () => {
    const memory = await memoryWith(chat(3));
    await memory.buildContext(scope, { policy: 'window', windowTurns: 1 });
    await memory.buildContext(scope, { policy: 'full' });
    const stats = await memory.stats(scope);
    expect(stats?.usage.requests).toBe(2);
    expect(stats?.usage.savedTokens).toBeGreaterThan(0);
    const empty = await memory.buildContext({ conversationId: 'never' }, { system: 'hi' });
    expect(empty.messages).toEqual([{ role: 'system', content: 'hi' }]);
    expect(await memory.stats({ conversationId: 'never' })).toBeUndefined();
  });
});

describe('buildContext query', () => {
  /** A memory with no background work, holding a solar relay's statement followed by 30 exchanges of chat. */
  async function solarRelayMemory(context: { recall?: 'when-asked' | 'every-turn' } = {}) {
    const memory = createMemory({
      store: new InMemoryStore(),
      compaction: false,
      knowledge: false,
      worker: { autoStart: false },
      context,
    });
    await memory.append(scope, [
      { role: 'user', content: 'The relay LARCH-RIDGE runs on solar.' },
      { role: 'assistant', content: 'Noted.' },
      ...chat(30, 3),
    ]);
    return memory;
  }

  it('recalls with the query the caller gives, not the newest message', async () => {
    const memory = await solarRelayMemory();
    const withQuery = await memory.buildContext(scope, {
      policy: 'hybrid',
      maxTokens: 300,
      query: 'which relay runs on solar?',
    });
    expect(withQuery.report.parts.find((part) => part.kind === 'recalled')?.items).toContainEqual(
      expect.objectContaining({ seq: 1 }),
    );
    await expect(memory.buildContext(scope, { policy: 'hybrid', query: 42 as never })).rejects.toSatisfy(
      (error: unknown) => isMemoryError(error, 'invalid_input'),
    );
  });

  it('recalls for a turn that asks, not for one that tells, unless recall is every-turn', async () => {
    const memory = await solarRelayMemory();
    await memory.append(scope, { role: 'user', content: 'The relay on solar needs a new panel.' });
    const recalledSeqs = (built: Awaited<ReturnType<typeof memory.buildContext>>) =>
      built.report.parts.find((part) => part.kind === 'recalled')?.items?.map((item) => item.seq) ?? [];

    const tells = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 300 });
    expect(tells.report.recall).toEqual({ mode: 'skipped', reason: 'not_asked' });
    expect(recalledSeqs(tells)).toEqual([]);
    expect(tells.report.parts.map((part) => part.kind)).not.toContain('recalled');

    const everyTurn = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 300, recall: 'every-turn' });
    expect(everyTurn.report.recall).toEqual({ mode: 'keyword-only', reason: 'no_embedder' });
    expect(recalledSeqs(everyTurn)).toContain(1);

    const asks = await memory.buildContext(scope, {
      policy: 'hybrid',
      maxTokens: 300,
      query: 'which relay runs on solar',
    });
    expect(recalledSeqs(asks)).toContain(1);

    await expect(memory.buildContext(scope, { policy: 'hybrid', recall: 'sometimes' as never })).rejects.toSatisfy(
      (error: unknown) => isMemoryError(error, 'invalid_input'),
    );
    const everyTurnEngine = await solarRelayMemory({ recall: 'every-turn' });
    await everyTurnEngine.append(scope, { role: 'user', content: 'The relay on solar needs a new panel.' });
    expect(recalledSeqs(await everyTurnEngine.buildContext(scope, { policy: 'hybrid', maxTokens: 300 }))).toContain(1);
    expect(() => createMemory({ store: new InMemoryStore(), context: { recall: 'never' as never } })).toThrow(
      /recall must be one of when-asked, every-turn/,
    );
  });
});

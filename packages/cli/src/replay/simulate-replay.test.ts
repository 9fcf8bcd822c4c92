import { createMemory, InMemoryStore, type MessageInput } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { simulateReplay } from './simulate-replay.js';

function transcript(turns: number): MessageInput[] {
  return Array.from({ length: turns }, (_, turn) => [
    { role: 'user' as const, content: `Question ${turn}: what is the battery voltage of node ${turn} right now, and is its solar panel charging?` },
    { role: 'assistant' as const, content: `Node ${turn} reads 3.${turn % 10} V and the panel is charging at a steady rate.` },
  ]).flat();
}

describe('simulateReplay', () => {
  it('simulates one request before each assistant message and sums what each policy sends', async () => {
    const memory = createMemory({ store: new InMemoryStore() });
    const messages = transcript(12);

    const totals = await simulateReplay({ memory, conversationId: 'r', messages, policies: ['full', 'token-window'], maxTokens: 150, windowTurns: 4 });

    expect(totals.map((total) => total.policy)).toEqual(['full', 'token-window']);
    for (const total of totals) {
      expect(total).toMatchObject({ maxTokens: 150, messages: 24, requests: 12 });
      expect(total.sentTokens).toBeLessThanOrEqual(12 * 150);
      expect(total.fullHistoryTokens).toBeGreaterThan(total.sentTokens);
      expect(total.savedTokens).toBe(total.fullHistoryTokens - total.sentTokens);
      expect(total.savedPercent).toBeGreaterThan(0);
    }
    expect((await memory.listMessages({ conversationId: 'r' })).map((message) => message.content)).toEqual(messages.map((message) => message.content));
  });

  it('sends the whole history and saves nothing when the budget is large', async () => {
    const memory = createMemory({ store: new InMemoryStore() });

    const [total] = await simulateReplay({ memory, conversationId: 'r', messages: transcript(5), policies: ['token-window'], maxTokens: 100_000, windowTurns: 4 });

    expect(total!.savedTokens).toBe(0);
    expect(total!.savedPercent).toBe(0);
  });

  it('records only the recorded policy in the usage ledger', async () => {
    const memory = createMemory({ store: new InMemoryStore() });

    await simulateReplay({
      memory,
      conversationId: 'r',
      messages: transcript(6),
      policies: ['full', 'window', 'token-window'],
      recordedPolicy: 'window',
      maxTokens: 200,
      windowTurns: 2,
    });

    const stats = await memory.stats({ conversationId: 'r' });
    expect(stats!.usage.requests).toBe(6);
  });

  it('matches what memory.buildContext reports for the policies it assembles itself', async () => {
    const recorded = createMemory({ store: new InMemoryStore() });
    const assembled = createMemory({ store: new InMemoryStore() });
    const options = { conversationId: 'r', messages: transcript(9), maxTokens: 180, windowTurns: 3, system: 'Be brief.' };

    const [viaBuild] = await simulateReplay({ ...options, memory: recorded, policies: ['window'], recordedPolicy: 'window' });
    const [viaAssemble] = await simulateReplay({ ...options, memory: assembled, policies: ['window'], recordedPolicy: 'token-window' });

    expect(viaAssemble).toEqual(viaBuild);
  });

  it('stores nothing when the system prompt alone is over the budget', async () => {
    const memory = createMemory({ store: new InMemoryStore() });
    const system = 'Always answer in metric units. '.repeat(40);

    await expect(simulateReplay({ memory, conversationId: 'r', messages: transcript(2), policies: ['full'], maxTokens: 50, windowTurns: 4, system })).rejects.toMatchObject({
      code: 'budget_exceeded',
    });
    expect(await memory.listMessages({ conversationId: 'r' })).toEqual([]);
  });
});

import { createMemory, InMemoryStore, type Memory, type MessageInput } from '@mnemo/core';
import { afterEach, describe, expect, it } from 'vitest';
import { compactionSettingsForBudget } from '../store/open-memory.js';
import { simulateReplay } from './simulate-replay.js';

const opened: Memory[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((memory) => memory.close()));
});

function newMemory(maxTokens = 1000): Memory {
  const memory = createMemory({ store: new InMemoryStore(), compaction: { settings: compactionSettingsForBudget(maxTokens) }, worker: { autoStart: false } });
  opened.push(memory);
  return memory;
}

function transcript(turns: number): MessageInput[] {
  return Array.from({ length: turns }, (_, turn) => [
    { role: 'user' as const, content: `Question ${turn}: what is the battery voltage of node ${turn} right now, and is its solar panel charging?` },
    { role: 'assistant' as const, content: `Node ${turn} reads 3.${turn % 10} V and the panel is charging at a steady rate.` },
  ]).flat();
}

describe('simulateReplay', () => {
  it('simulates one request before each assistant message and sums what each policy sends', async () => {
    const memory = newMemory(150);
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
    const memory = newMemory(100_000);

    const [total] = await simulateReplay({ memory, conversationId: 'r', messages: transcript(5), policies: ['token-window'], maxTokens: 100_000, windowTurns: 4 });

    expect(total!.savedTokens).toBe(0);
    expect(total!.savedPercent).toBe(0);
  });

  it('records only the recorded policy when the others are measured on a comparison memory', async () => {
    const memory = newMemory(200);
    const comparisonMemory = newMemory(200);

    await simulateReplay({
      memory,
      comparisonMemory,
      conversationId: 'r',
      messages: transcript(6),
      policies: ['full', 'window', 'token-window'],
      recordedPolicy: 'window',
      maxTokens: 200,
      windowTurns: 2,
    });

    expect((await memory.stats({ conversationId: 'r' }))!.usage.requests).toBe(6);
    expect((await comparisonMemory.stats({ conversationId: 'r' }))!.usage.requests).toBe(12);
    expect(await comparisonMemory.listMessages({ conversationId: 'r' })).toHaveLength(12);
  });

  it('gives a policy the same totals whether it is recorded or measured on the comparison memory', async () => {
    const options = { conversationId: 'r', messages: transcript(30), maxTokens: 300, windowTurns: 3, system: 'Be brief.' };

    const [alone] = await simulateReplay({ ...options, memory: newMemory(300), policies: ['summary'] });
    const [, compared] = await simulateReplay({
      ...options,
      memory: newMemory(300),
      comparisonMemory: newMemory(300),
      policies: ['token-window', 'summary'],
      recordedPolicy: 'token-window',
    });

    expect(compared).toEqual(alone);
  });

  it('lets compaction finish before each request, so the summary policy sends less than token-window', async () => {
    const memory = newMemory(300);

    const [tokenWindow, summary] = await simulateReplay({ memory, conversationId: 'r', messages: transcript(30), policies: ['token-window', 'summary'], maxTokens: 300, windowTurns: 4 });

    expect((await memory.listSummaries({ conversationId: 'r' })).length).toBeGreaterThan(0);
    expect(summary!.sentTokens).toBeLessThan(tokenWindow!.sentTokens);
  });

  it('stores nothing when the system prompt alone is over the budget', async () => {
    const memory = newMemory(50);
    const system = 'Always answer in metric units. '.repeat(40);

    await expect(simulateReplay({ memory, conversationId: 'r', messages: transcript(2), policies: ['full'], maxTokens: 50, windowTurns: 4, system })).rejects.toMatchObject({
      code: 'budget_exceeded',
    });
    expect(await memory.listMessages({ conversationId: 'r' })).toEqual([]);
  });
});

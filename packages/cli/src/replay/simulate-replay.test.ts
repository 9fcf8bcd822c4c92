import { createMemory, type Memory, type MessageInput } from '@mnemo/core';
import { InMemoryStore } from '@mnemo/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { compactionSettingsFor } from '../config/cli-policies.js';
import { simulateReplay } from './simulate-replay.js';

const opened: Memory[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((memory) => memory.close()));
});

function newMemory(maxTokens = 1000, policy: 'summary' | 'meshai' = 'summary'): Memory {
  const memory = createMemory({
    store: new InMemoryStore(),
    compaction: { settings: compactionSettingsFor(policy, maxTokens) },
    worker: { autoStart: false },
  });
  opened.push(memory);
  return memory;
}

function transcript(turns: number): MessageInput[] {
  return Array.from({ length: turns }, (_, turn) => [
    {
      role: 'user' as const,
      content: `Question ${turn}: what is the battery voltage of node ${turn} right now, and is its solar panel charging?`,
    },
    {
      role: 'assistant' as const,
      content: `Node ${turn} reads 3.${turn % 10} V and the panel is charging at a steady rate.`,
    },
  ]).flat();
}

describe('simulateReplay', () => {
  it('simulates one request before each assistant message and sums what each policy sends', async () => {
    const memory = newMemory(150);
    const messages = transcript(12);

    const totals = await simulateReplay({
      memoryFor: () => memory,
      conversationId: 'r',
      messages,
      policies: ['full', 'token-window'],
      maxTokens: 150,
      windowTurns: 4,
    });

    expect(totals.map((total) => total.policy)).toEqual(['full', 'token-window']);
    for (const total of totals) {
      expect(total).toMatchObject({ maxTokens: 150, messages: 24, requests: 12 });
      expect(total.sentTokens).toBeLessThanOrEqual(12 * 150);
      expect(total.fullHistoryTokens).toBeGreaterThan(total.sentTokens);
      expect(total.savedTokens).toBe(total.fullHistoryTokens - total.sentTokens);
      expect(total.savedPercent).toBeGreaterThan(0);
      expect(total).toMatchObject({
        compactions: 0,
        summarizerTokens: 0,
        netSavedTokens: total.savedTokens,
        netSavedPercent: total.savedPercent,
      });
    }
    expect((await memory.listMessages({ userId: 'r', conversationId: 'r' })).map((message) => message.content)).toEqual(
      messages.map((message) => message.content),
    );
  });

  it('sends the whole history and saves nothing when the budget is large', async () => {
    const memory = newMemory(100_000);

    const [total] = await simulateReplay({
      memoryFor: () => memory,
      conversationId: 'r',
      messages: transcript(5),
      policies: ['token-window'],
      maxTokens: 100_000,
      windowTurns: 4,
    });

    expect(total!.savedTokens).toBe(0);
    expect(total!.savedPercent).toBe(0);
  });

  it('records only the recorded policy when the others are measured on a comparison memory', async () => {
    const memory = newMemory(200);
    const comparisonMemory = newMemory(200);

    await simulateReplay({
      memoryFor: (policy) => (policy === 'window' ? memory : comparisonMemory),
      conversationId: 'r',
      messages: transcript(6),
      policies: ['full', 'window', 'token-window'],
      maxTokens: 200,
      windowTurns: 2,
    });

    expect((await memory.stats({ userId: 'r', conversationId: 'r' }))!.usage.requests).toBe(6);
    expect((await comparisonMemory.stats({ userId: 'r', conversationId: 'r' }))!.usage.requests).toBe(12);
    expect(await comparisonMemory.listMessages({ userId: 'r', conversationId: 'r' })).toHaveLength(12);
  });

  it('gives a policy the same totals whether it is recorded or measured on the comparison memory', async () => {
    const options = {
      conversationId: 'r',
      messages: transcript(30),
      maxTokens: 300,
      windowTurns: 3,
      system: 'Be brief.',
    };

    const alone = newMemory(300);
    const [aloneTotals] = await simulateReplay({ ...options, memoryFor: () => alone, policies: ['summary'] });
    const recorded = newMemory(300);
    const comparison = newMemory(300);
    const [, compared] = await simulateReplay({
      ...options,
      memoryFor: (policy) => (policy === 'token-window' ? recorded : comparison),
      policies: ['token-window', 'summary'],
    });

    expect(compared).toEqual(aloneTotals);
  });

  it('lets compaction finish before each request, so the summary policy sends less than token-window', async () => {
    const memory = newMemory(300);

    const [tokenWindow, summary] = await simulateReplay({
      memoryFor: () => memory,
      conversationId: 'r',
      messages: transcript(30),
      policies: ['token-window', 'summary'],
      maxTokens: 300,
      windowTurns: 4,
    });

    expect((await memory.listSummaries({ userId: 'r', conversationId: 'r' })).length).toBeGreaterThan(0);
    expect(summary!.sentTokens).toBeLessThan(tokenWindow!.sentTokens);
  });

  it('charges the summarizer calls made up to the last request to the summary policy only when memories are shared', async () => {
    const memory = newMemory(300);
    // Records what compaction had cost after each drain; the last drain follows the last request.
    const costAfterDrain: number[] = [];
    const observed: Memory = {
      ...memory,
      runPendingJobs: async () => {
        const ran = await memory.runPendingJobs();
        const usage = (await memory.stats({ userId: 'r', conversationId: 'r' }))?.usage;
        costAfterDrain.push((usage?.summarizerInputTokens ?? 0) + (usage?.summarizerOutputTokens ?? 0));
        return ran;
      },
    };

    const [tokenWindow, summary] = await simulateReplay({
      memoryFor: () => observed,
      conversationId: 'r',
      messages: transcript(30),
      policies: ['token-window', 'summary'],
      maxTokens: 300,
      windowTurns: 4,
    });

    expect(tokenWindow).toMatchObject({
      compactions: 0,
      summarizerTokens: 0,
      netSavedTokens: tokenWindow!.savedTokens,
    });
    expect(summary!.compactions).toBeGreaterThan(0);
    expect(summary!.summarizerTokens).toBe(costAfterDrain[costAfterDrain.length - 2]);
    expect(summary!.summarizerTokens).toBe(summary!.summarizerInputTokens + summary!.summarizerOutputTokens);
    expect(summary!.netSavedTokens).toBe(summary!.fullHistoryTokens - summary!.sentTokens - summary!.summarizerTokens);
    expect(summary!.netSavedPercent).toBeCloseTo((summary!.netSavedTokens / summary!.fullHistoryTokens) * 100, 0);
  });

  it('measures meshai on its own memory with the meshai preset when the policies get separate memories', async () => {
    const summaryMemory = newMemory(1000);
    const meshaiMemory = newMemory(1000, 'meshai');

    const [summary, meshai] = await simulateReplay({
      memoryFor: (policy) => (policy === 'meshai' ? meshaiMemory : summaryMemory),
      conversationId: 'r',
      messages: transcript(20),
      policies: ['summary', 'meshai'],
      maxTokens: 1000,
      windowTurns: 4,
    });

    expect(meshai!.policy).toBe('meshai');
    expect(summary!.compactions).toBeGreaterThan(0);
    expect(meshai!.compactions).not.toBe(summary!.compactions);
    const folds = (await meshaiMemory.listSummaries({ userId: 'r', conversationId: 'r' }))
      .filter((entry) => entry.level === 0)
      .map((entry) => entry.toSeq);
    // Before each request the 4 newest turns (the in-flight question and 3 exchanges) stay raw, so every fold takes the same step of ≥ 8 messages.
    const steps = folds.map((toSeq, index) => toSeq - (folds[index - 1] ?? 0));
    expect(folds.length).toBeGreaterThan(1);
    expect(new Set(steps).size).toBe(1);
    expect(steps[0]).toBeGreaterThanOrEqual(8);
  });

  it('stores nothing when the system prompt alone is over the budget', async () => {
    const memory = newMemory(50);
    const system = 'Always answer in metric units. '.repeat(40);

    await expect(
      simulateReplay({
        memoryFor: () => memory,
        conversationId: 'r',
        messages: transcript(2),
        policies: ['full'],
        maxTokens: 50,
        windowTurns: 4,
        system,
      }),
    ).rejects.toMatchObject({
      code: 'budget_exceeded',
    });
    expect(await memory.listMessages({ userId: 'r', conversationId: 'r' })).toEqual([]);
  });
});

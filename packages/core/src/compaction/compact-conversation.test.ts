import { describe, expect, it } from 'vitest';
import { createMemory } from '../engine/create-memory.js';
import type { Memory } from '../engine/memory.js';
import { isMemoryError, MemoryError } from '../errors/memory-error.js';
import type { MessageInput } from '../messages/message.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import {
  compactionSettingsForBudget,
  defaultCompactionSettings,
  resolveCompactionSettings,
} from './compaction-settings.js';
import { createGptTokenCounter } from '../tokens/gpt-token-counter.js';
import { ExtractiveSummarizer } from './extractive-summarizer.js';
import type { Summarizer } from './summarizer.js';

const scope = { conversationId: 'node-7' };

function chat(turns: number): MessageInput[] {
  return Array.from({ length: turns * 2 }, (_, index) => ({
    role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content:
      index % 2 === 0
        ? `Relay ${index} reports SNR -${index % 13}.5 dB at node !a${index}f9.`
        : `Noted, battery at ${index % 100}% on day ${index}.`,
  }));
}

async function checkCoverage(memory: Memory): Promise<void> {
  const stats = await memory.stats(scope);
  const summaries = await memory.listSummaries(scope);
  const latest = summaries.at(-1);
  expect(stats?.summarizedThroughSeq).toBe(latest?.toSeq ?? 0);
  // Provenance: every summary folds the one written before it, and covers 1…toSeq, never shrinking.
  summaries.forEach((summary, index) => {
    expect(summary.fromSeq).toBe(1);
    if (index > 0) {
      expect(summary.foldedSummaryIds).toEqual([summaries[index - 1]!.id]);
      expect(summary.toSeq).toBeGreaterThanOrEqual(summaries[index - 1]!.toSeq);
    }
  });
  if (latest !== undefined) {
    const expanded = await memory.expand({}, latest.id);
    expect(expanded.messages.map((message) => message.seq)).toEqual(
      Array.from({ length: latest.toSeq }, (_, index) => index + 1),
    );
  }
}

describe('compaction', () => {
  it('folds old turns into a rolling summary in the background and keeps every message', async () => {
    const memory = createMemory({
      store: new InMemoryStore(),
      worker: { autoStart: false },
      compaction: { settings: { triggerTokens: 300, keepRecentTokens: 100, maxSummaryTokens: 120 } },
    });
    for (const message of chat(60)) {
      await memory.append(scope, message);
      await memory.runPendingJobs();
    }
    const summaries = await memory.listSummaries(scope);
    expect(summaries.length).toBeGreaterThan(3);
    expect((await memory.listMessages(scope)).length).toBe(120);
    await checkCoverage(memory);
    const stats = await memory.stats(scope);
    expect(stats!.totalTokens - stats!.summarizedTokens).toBeLessThanOrEqual(300);
    expect(stats!.usage.compactions).toBe(summaries.length);
    expect(stats!.usage.summarizerInputTokens).toBeGreaterThan(0);
  });

  it('builds summary contexts whose summary and raw turns meet without gap or overlap, at a flat size', async () => {
    const memory = createMemory({
      store: new InMemoryStore(),
      worker: { autoStart: false },
      compaction: { settings: { triggerTokens: 300, keepRecentTokens: 100, maxSummaryTokens: 120 } },
    });
    const sizes: number[] = [];
    for (const [index, message] of chat(100).entries()) {
      await memory.append(scope, message);
      await memory.runPendingJobs();
      if (index % 2 === 0 && index > 40) {
        const { report, messages } = await memory.buildContext(scope, {
          policy: 'summary',
          maxTokens: 2000,
          system: 'You are a mesh radio bot.',
        });
        const summaryPart = report.parts.find((part) => part.kind === 'summary');
        const recentPart = report.parts.find((part) => part.kind === 'recent');
        expect(summaryPart?.seqRange?.from).toBe(1);
        expect(recentPart?.seqRange?.from).toBe(summaryPart!.seqRange!.to + 1);
        expect(recentPart?.seqRange?.to).toBe(index + 1);
        expect(messages[1]?.content).toMatch(/^Summary of the earlier conversation \(messages 1–\d+\):/);
        expect(report.dropped).toEqual([
          expect.objectContaining({ reason: 'summarized', seqRange: summaryPart!.seqRange }),
        ]);
        sizes.push(report.sentTokens);
      }
    }
    expect(Math.max(...sizes)).toBeLessThan(700);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThan(400);
  });

  it('keeps the last 4 exchanges and re-summarizes every 8 messages with the meshai preset', async () => {
    const memory = createMemory({
      store: new InMemoryStore(),
      worker: { autoStart: false },
      compaction: { settings: { keepRecentTurns: 4, keepRecentTokens: 0, everyMessages: 8 } },
    });
    for (const message of chat(20)) {
      await memory.append(scope, message);
      await memory.runPendingJobs();
    }
    const stats = await memory.stats(scope);
    const raw = stats!.messageCount - stats!.summarizedThroughSeq;
    expect(raw).toBeGreaterThanOrEqual(8);
    expect(raw).toBeLessThan(16);
    expect((await memory.listSummaries(scope)).map((summary) => summary.toSeq)).toEqual([8, 16, 24, 32]);
  });

  it('runs in the background worker by default and stops it on close', async () => {
    const memory = createMemory({
      store: new InMemoryStore(),
      worker: { pollIntervalMs: 10 },
      compaction: { settings: { triggerTokens: 200, keepRecentTokens: 50 } },
    });
    await memory.append(scope, chat(30));
    for (let attempt = 0; attempt < 200 && (await memory.listSummaries(scope)).length === 0; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect((await memory.listSummaries(scope)).length).toBeGreaterThan(0);
    await memory.close();
  });

  it('retries a failing summarizer with backoff, records the error, and never loses a message', async () => {
    let calls = 0;
    const broken: Summarizer = {
      id: 'broken@1',
      async summarize() {
        calls += 1;
        throw new MemoryError('model_failed', 'upstream returned 500');
      },
    };
    const store = new InMemoryStore();
    let clock = Date.UTC(2030, 0, 1);
    const memory = createMemory({
      store,
      now: () => clock,
      worker: { autoStart: false },
      compaction: { summarizer: broken, settings: { triggerTokens: 100, keepRecentTokens: 20 } },
    });
    await memory.append(scope, chat(20));
    for (let round = 0; round < 10; round += 1) {
      await memory.runPendingJobs();
      clock += 10 * 60_000;
    }
    const [job] = await store.listJobs({ tenantId: 'default', userId: 'default', conversationId: 'node-7' });
    expect(job).toMatchObject({ status: 'failed', attempts: 5, lastError: 'upstream returned 500' });
    expect(calls).toBe(5);
    expect(await memory.listMessages(scope)).toHaveLength(40);
    expect(await memory.listSummaries(scope)).toEqual([]);
    const { report } = await memory.buildContext(scope, { policy: 'summary', maxTokens: 300 });
    expect(report.dropped.every((run) => run.reason === 'awaiting_compaction')).toBe(true);
  });

  it('works a backlog that takes longer than one job attempt through in several jobs, each done on its first attempt', async () => {
    const store = new InMemoryStore();
    let clock = Date.UTC(2030, 0, 1);
    const extractive = new ExtractiveSummarizer({ tokenCounter: createGptTokenCounter() });
    // Each summarizer call takes 400 ms of the worker's clock; an attempt has 1,000 ms, so about two rounds.
    const slow: Summarizer = {
      id: 'slow@1',
      async summarize(input) {
        clock += 400;
        return extractive.summarize(input);
      },
    };
    const memory = createMemory({
      store,
      now: () => clock,
      knowledge: false,
      worker: { autoStart: false, attemptTimeoutMs: 1000 },
      compaction: {
        summarizer: slow,
        settings: { triggerTokens: 100, keepRecentTokens: 20, maxSummaryTokens: 400, maxSourceTokensPerRound: 200 },
      },
    });
    await memory.append(scope, chat(40));
    await memory.runPendingJobs();

    const jobs = await store.listJobs({ tenantId: 'default', userId: 'default', conversationId: 'node-7' });
    expect(jobs.length).toBeGreaterThan(2);
    expect(jobs.every((job) => job.kind === 'compact' && job.status === 'done' && job.attempts === 1)).toBe(true);
    const stats = await memory.stats(scope);
    expect(stats!.totalTokens - stats!.summarizedTokens).toBeLessThanOrEqual(100);
    expect((await memory.listSummaries(scope)).length).toBeGreaterThan(jobs.length);
    await checkCoverage(memory);
  });

  it('finishes the job of a summary written by the fallback summarizer with a warning, logged and kept on the job', async () => {
    const degraded: Summarizer = {
      id: 'degraded@1',
      async summarize(input) {
        const fallback = await new ExtractiveSummarizer({ tokenCounter: createGptTokenCounter() }).summarize(input);
        return { ...fallback, fallbackReason: 'model timed out' };
      },
    };
    const store = new InMemoryStore();
    const warnings: string[] = [];
    const memory = createMemory({
      store,
      worker: { autoStart: false, onWarning: (warning) => warnings.push(warning) },
      compaction: { summarizer: degraded, settings: { triggerTokens: 100, keepRecentTokens: 20 } },
    });
    await memory.append(scope, chat(20));

    await memory.runPendingJobs();

    const compact = (await store.listJobs({ tenantId: 'default', userId: 'default', conversationId: 'node-7' })).find(
      (job) => job.kind === 'compact',
    );
    expect(compact).toMatchObject({ status: 'done', lastError: expect.stringContaining('fell back') as unknown });
    expect(compact?.lastError).toContain('model timed out');
    expect(warnings).toEqual([compact?.lastError]);
    expect((await memory.listSummaries(scope))[0]?.fallbackReason).toBe('model timed out');
  });

  it('compacts on demand and refuses when compaction is off', async () => {
    const memory = createMemory({ store: new InMemoryStore(), worker: { autoStart: false } });
    await memory.append(scope, chat(10));
    const written = await memory.compact(scope);
    expect(written[0]?.toSeq).toBe(16);
    const off = createMemory({ store: new InMemoryStore(), compaction: false });
    await expect(off.compact(scope)).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'invalid_input'));
  });

  it('condenses a summary that outgrows its bound into the next level', async () => {
    const verbose: Summarizer = {
      id: 'verbose@1',
      async summarize(input) {
        const text =
          input.messages.length === 0
            ? 'condensed facts'
            : `${input.previousSummary ?? ''} ${'fact '.repeat(130)}`.trim();
        return { content: text, summarizer: this.id, inputTokens: 10, outputTokens: 10 };
      },
    };
    const memory = createMemory({
      store: new InMemoryStore(),
      worker: { autoStart: false },
      compaction: { summarizer: verbose, settings: { maxSummaryTokens: 100 } },
    });
    await memory.append(scope, chat(10));
    const written = await memory.compact(scope);
    expect(written.map((summary) => summary.level)).toEqual([0, 1]);
    expect(written[1]?.foldedSummaryIds).toEqual([written[0]?.id]);
    expect((await memory.expand({}, written[1]!.id)).folded.map((summary) => summary.id)).toEqual([written[0]!.id]);
  });
});

describe('compaction with recorded facts', () => {
  const lines = [
    'btw my radio mentor is Ilse Varga, she taught me everything about antennas',
    'Noted, I will keep that in mind.',
    ...Array.from({ length: 16 }, (_, index) =>
      index % 2 === 0
        ? `Relay PEAK-${index} at ${index + 3} km, SNR -${index}.5 dB, battery ${60 + index} %.`
        : `Copy, ${index} hops.`,
    ),
  ];

  for (const keepFacts of [true, false]) {
    it(`${keepFacts ? 'keeps' : 'does not give'} the facts extraction recorded from the range ${keepFacts ? 'as lines of the summary' : 'to the summarizer with keepFacts off'}`, async () => {
      // A 200-token budget: the chat outgrows the 180 tokens a conversation may reach verbatim.
      const memory = createMemory({
        store: new InMemoryStore(),
        context: { maxTokens: 200 },
        compaction: { settings: { keepFacts, maxSummaryTokens: 20 } },
        worker: { autoStart: false },
      });
      const messages = lines.map((content, index) => ({
        role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content,
      }));
      // Extraction runs before the backlog is due for compaction, as it does in a chat that goes on.
      await memory.append(scope, messages.slice(0, 2));
      await memory.runPendingJobs();
      await memory.append(scope, messages.slice(2));
      await memory.runPendingJobs();

      expect((await memory.facts.list({})).map((fact) => fact.value)).toContain('Ilse Varga');
      const latest = (await memory.listSummaries(scope)).at(-1)!;
      if (keepFacts) expect(latest.content).toContain('- radio mentor: Ilse Varga');
      else expect(latest.content).not.toContain('- radio mentor');
      await memory.close();
    });
  }
});

describe('compactionSettingsForBudget', () => {
  it("keeps a conversation verbatim to 90 % of the budget, then folds at the cost model's high mark, keeping what leaves the prefix cacheable, and bounds the summary at 14 %", () => {
    // 1,000 tokens: too small a budget for a cacheable low mark above 1,024 tokens, so a fold keeps 2 turns.
    expect(compactionSettingsForBudget(1000)).toEqual({
      triggerTokens: 650,
      verbatimTokens: 900,
      keepRecentTokens: 0,
      keepRecentTurns: 2,
      maxSummaryTokens: 140,
      maxSourceTokensPerRound: 6000,
      keepFacts: true,
    });
    // 2,000 tokens at the default 10 % cached price: fold at 65 %, keep 1,152 − 280 tokens raw so the prefix stays over 1,024.
    expect(compactionSettingsForBudget(2000)).toEqual({
      triggerTokens: 1300,
      verbatimTokens: 1800,
      keepRecentTokens: 872,
      keepRecentTurns: 2,
      maxSummaryTokens: 280,
      maxSourceTokensPerRound: 6000,
      keepFacts: true,
    });
    expect(compactionSettingsForBudget(2000)).toEqual(defaultCompactionSettings);
    // No caching: short runs pay (fold often, keep nothing beyond the 2 turns); the ratio must be 0–1.
    expect(compactionSettingsForBudget(2000, { cachedPriceRatio: 1 })).toMatchObject({
      triggerTokens: 300,
      keepRecentTokens: 0,
    });
    expect(compactionSettingsForBudget(2000, { cachedPriceRatio: 0.5 }).triggerTokens).toBeGreaterThan(
      compactionSettingsForBudget(2000, { cachedPriceRatio: 1 }).triggerTokens,
    );
    expect(() => compactionSettingsForBudget(2000, { cachedPriceRatio: 1.5 })).toThrow(/cachedPriceRatio/);
    expect(compactionSettingsForBudget(10).triggerTokens).toBe(65);
    expect(() => compactionSettingsForBudget(0)).toThrow(/positive integer/);
  });

  it('takes a trigger set by hand for the first compaction too, unless the verbatim mark is set with it', () => {
    expect(resolveCompactionSettings({ triggerTokens: 300 }).verbatimTokens).toBeUndefined();
    expect(resolveCompactionSettings({ triggerTokens: 300, verbatimTokens: 500 }).verbatimTokens).toBe(500);
    expect(resolveCompactionSettings({ keepFacts: false }).verbatimTokens).toBe(1800);
  });

  it('is what createMemory compacts with for its default budget', async () => {
    const memory = createMemory({
      store: new InMemoryStore(),
      context: { maxTokens: 1000 },
      worker: { autoStart: false },
    });
    const scope = { conversationId: 'budget' };
    const line = (index: number) => ({
      role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content: `Relay ${index} on channel ${index % 7}, battery ${60 + index} %.`,
    });
    await memory.append(
      scope,
      Array.from({ length: 30 }, (_, index) => line(index)),
    );
    await memory.runPendingJobs();
    // Under 900 tokens the conversation stays verbatim.
    expect(await memory.listSummaries(scope)).toEqual([]);
    await memory.append(
      scope,
      Array.from({ length: 60 }, (_, index) => line(30 + index)),
    );
    await memory.runPendingJobs();

    const [summary] = await memory.listSummaries(scope);
    expect(summary).toBeDefined();
    // 2 turns (4 messages) stay raw after a fold.
    expect(summary!.toSeq).toBe(86);
    expect(summary!.tokens).toBeLessThanOrEqual(140);
    await memory.close();
  });
});

import { describe, expect, it } from 'vitest';
import { createMemory } from '../engine/create-memory.js';
import type { MessageInput } from '../messages/message.js';
import { HashedEmbedder } from '../recall/hashed-embedder.js';
import { InMemoryStore } from '../store/in-memory-store.js';
import { hybridShares } from './assemble-hybrid.js';

const scope = { userId: 'maren', conversationId: 'node-7' };

function filler(turns: number, from = 0): MessageInput[] {
  return Array.from({ length: turns * 2 }, (_, index) => ({
    role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `Signal report ${from + index}: SNR ${(index % 9) - 12}.5 dB, all good on channel ${index % 5}.`,
  }));
}

async function memoryWithHistory() {
  const store = new InMemoryStore();
  const memory = createMemory({ store, embedder: new HashedEmbedder(), worker: { autoStart: false }, compaction: { settings: { triggerTokens: 400, keepRecentTokens: 150 } } });
  await memory.append(scope, [
    { role: 'user', content: 'My relay is called LARCH-RIDGE and it runs on a solar panel.' },
    { role: 'assistant', content: 'Noted: relay LARCH-RIDGE.' },
  ]);
  await memory.append(scope, filler(40));
  await store.insertFact({ tenantId: 'default', userId: 'maren' }, {
    subject: 'user', attribute: 'name', value: 'Maren', text: "I'm Maren", confidence: 0.9, validFrom: '2025-05-28T10:00:00.000Z', sourceSeqs: [1], extractor: 'test', createdAt: '2025-05-28T10:00:00.000Z',
  });
  await memory.append(scope, { role: 'user', content: "what was that relay's name again?" });
  await memory.runPendingJobs();
  return memory;
}

describe('hybrid context', () => {
  it('orders system, facts, summary, recent turns, recalled snippets, newest user turn', async () => {
    const memory = await memoryWithHistory();
    const { messages, report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 1200, system: 'Be brief.' });
    expect(report.parts.map((part) => part.kind)).toEqual(['system', 'facts', 'summary', 'recent', 'recalled']);
    expect(messages[0]?.content).toBe('Be brief.');
    expect(messages[1]?.content).toContain('name: Maren');
    expect(messages[2]?.content).toMatch(/^Summary of the earlier conversation/);
    const recalledIndex = messages.findIndex((message) => message.content.startsWith('Earlier messages that may matter'));
    expect(messages[recalledIndex]?.content).toContain('LARCH-RIDGE');
    expect(messages.slice(recalledIndex + 1)).toEqual([{ role: 'user', content: "what was that relay's name again?" }]);
    expect(report.sentTokens).toBeLessThanOrEqual(1200);
  });

  it('keeps each memory part within its share and explains the items it left out', async () => {
    const memory = await memoryWithHistory();
    const { report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 600 });
    const room = 600 - report.requestOverheadTokens;
    const share = (kind: string) => report.parts.find((part) => part.kind === kind)?.tokens ?? 0;
    expect(share('facts')).toBeLessThanOrEqual(room * hybridShares.facts);
    expect(share('summary')).toBeLessThanOrEqual(room * hybridShares.summary);
    expect(report.parts.find((part) => part.kind === 'recalled')?.items).toContainEqual(expect.objectContaining({ kind: 'recalled', seq: 1 }));
    for (const item of report.excludedItems) expect(['over_budget', 'already_in_context']).toContain(item.reason);
    expect(report.sentTokens).toBeLessThanOrEqual(600);
  });

  it('never recalls a message the recent turns already hold', async () => {
    const memory = createMemory({ store: new InMemoryStore(), worker: { autoStart: false }, compaction: false });
    await memory.append(scope, [
      { role: 'user', content: 'The relay LARCH-RIDGE is up.' },
      { role: 'assistant', content: 'Good.' },
      { role: 'user', content: 'Is LARCH-RIDGE still up?' },
    ]);
    const { report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 2000 });
    expect(report.parts.some((part) => part.kind === 'recalled')).toBe(false);
    expect(report.excludedItems.filter((item) => item.reason === 'already_in_context').map((item) => item.seq).sort()).toEqual([1, 3]);
  });

  it('gives the newest turn precedence over memory when the budget is tiny', async () => {
    const memory = await memoryWithHistory();
    const { messages, report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 40 });
    expect(messages.at(-1)?.content).toContain('relay');
    expect(report.sentTokens).toBeLessThanOrEqual(40);
  });
});

describe('hybrid context under a saturated embedder', () => {
  /** Embeds stored messages like the hashed embedder, but never answers a query: every worker is busy. */
  class SaturatedEmbedder extends HashedEmbedder {
    readonly querySignals: AbortSignal[] = [];
    saturated = false;
    override embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
      if (!this.saturated) return super.embed(texts);
      if (options.signal !== undefined) this.querySignals.push(options.signal);
      return new Promise(() => undefined);
    }
  }

  it('answers keyword-only at the query embedding deadline, says so in the report, and aborts the embedding', async () => {
    const embedder = new SaturatedEmbedder();
    const memory = createMemory({ store: new InMemoryStore(), embedder, queryEmbeddingTimeoutMs: 25, worker: { autoStart: false }, compaction: false });
    await memory.append(scope, [
      { role: 'user', content: 'My relay is called LARCH-RIDGE and it runs on a solar panel.' },
      { role: 'assistant', content: 'Noted: relay LARCH-RIDGE.' },
      ...filler(30),
      { role: 'user', content: 'which solar relay did I name?' },
    ]);
    await memory.runPendingJobs();
    embedder.saturated = true;

    const { messages, report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 300 });

    expect(report.recall).toEqual({ mode: 'keyword-only', reason: 'embedding_deadline' });
    expect(messages.map((message) => message.content).join('\n')).toContain('LARCH-RIDGE');
    expect(embedder.querySignals).toHaveLength(1);
    expect(embedder.querySignals[0]?.aborted).toBe(true);
  });

  it('reports hybrid recall when the query embedding is in time, and keyword-only without an embedder', async () => {
    const withEmbedder = createMemory({ store: new InMemoryStore(), embedder: new HashedEmbedder(), worker: { autoStart: false }, compaction: false });
    const without = createMemory({ store: new InMemoryStore(), worker: { autoStart: false }, compaction: false });
    for (const memory of [withEmbedder, without]) await memory.append(scope, [...filler(3), { role: 'user', content: 'channel report?' }]);
    await withEmbedder.runPendingJobs();

    expect((await withEmbedder.buildContext(scope, { policy: 'hybrid', maxTokens: 300 })).report.recall).toEqual({ mode: 'hybrid' });
    expect((await without.buildContext(scope, { policy: 'hybrid', maxTokens: 300 })).report.recall).toEqual({ mode: 'keyword-only', reason: 'no_embedder' });
    expect((await without.buildContext(scope, { policy: 'token-window', maxTokens: 300 })).report.recall).toBeUndefined();
  });
});

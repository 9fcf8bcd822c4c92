import { describe, expect, it } from 'vitest';
import { createMemory } from '../engine/create-memory.js';
import type { MemoryOptions } from '../engine/memory-options.js';
import type { Embedder } from '../recall/embedder.js';
import { MemoryError } from '../errors/memory-error.js';
import type { MessageInput } from '../messages/message.js';
import { HashedEmbedder } from '../recall/hashed-embedder.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { createGptTokenCounter } from '../tokens/gpt-token-counter.js';
import { hybridShares, minRecallTokens } from './assemble-hybrid.js';

const scope = { userId: 'maren', conversationId: 'node-7' };

function filler(turns: number, from = 0): MessageInput[] {
  return Array.from({ length: turns * 2 }, (_, index) => ({
    role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `Signal report ${from + index}: SNR ${(index % 9) - 12}.5 dB, all good on channel ${index % 5}.`,
  }));
}

async function memoryWithHistory(store = new InMemoryStore()) {
  // keepFacts off: these tests place facts in the facts block and the recent turns; a summary's fact lines are tested apart.
  const memory = createMemory({
    store,
    embedder: new HashedEmbedder(),
    worker: { autoStart: false },
    compaction: { settings: { triggerTokens: 400, keepRecentTokens: 150, keepFacts: false } },
  });
  await memory.append(scope, [
    { role: 'user', content: 'My relay is called LARCH-RIDGE and it runs on a solar panel.' },
    { role: 'assistant', content: 'Noted: relay LARCH-RIDGE.' },
  ]);
  await memory.append(scope, filler(40));
  await store.insertFact(
    { tenantId: 'default', userId: 'maren' },
    {
      subject: 'user',
      attribute: 'name',
      value: 'Maren',
      text: "I'm Maren",
      confidence: 0.9,
      validFrom: '2025-05-28T10:00:00.000Z',
      sourceSeqs: [1],
      extractor: 'test',
      createdAt: '2025-05-28T10:00:00.000Z',
    },
  );
  await memory.append(scope, { role: 'user', content: "what was that relay's name again?" });
  await memory.runPendingJobs();
  return memory;
}

describe('hybrid context', () => {
  it('orders system, facts, summary, recent turns, recalled snippets, newest user turn', async () => {
    const memory = await memoryWithHistory();
    const { messages, report } = await memory.buildContext(scope, {
      policy: 'hybrid',
      maxTokens: 1200,
      system: 'Be brief.',
    });
    expect(report.parts.map((part) => part.kind)).toEqual(['system', 'facts', 'summary', 'recent', 'recalled']);
    expect(messages[0]?.content).toBe('Be brief.');
    expect(messages[1]?.content).toContain('name: Maren');
    expect(messages[2]?.content).toMatch(/^Summary of the earlier conversation/);
    const recalledIndex = messages.findIndex((message) =>
      message.content.startsWith('Earlier messages that may matter'),
    );
    expect(messages[recalledIndex]?.content).toContain('LARCH-RIDGE');
    expect(messages.slice(recalledIndex + 1)).toEqual([{ role: 'user', content: "what was that relay's name again?" }]);
    expect(report.sentTokens).toBeLessThanOrEqual(1200);
  });

  it('keeps each memory part within its share', async () => {
    const memory = await memoryWithHistory();
    const { report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 600 });
    const room = 600 - report.requestOverheadTokens;
    const share = (kind: string) => report.parts.find((part) => part.kind === kind)?.tokens ?? 0;
    expect(share('facts')).toBeLessThanOrEqual(room * hybridShares.facts);
    expect(share('summary')).toBeLessThanOrEqual(room * hybridShares.summary);
    expect(report.parts.find((part) => part.kind === 'recalled')?.items).toContainEqual(
      expect.objectContaining({ kind: 'recalled', seq: 1 }),
    );
    expect(report.sentTokens).toBeLessThanOrEqual(600);
  });

  it('marks a recalled turn already_in_context when the recent turns hold it, and an item over_budget when it does not fit what its block has left', async () => {
    const memory = await memoryWithHistory();
    const maxTokens = 300;
    const { report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens });
    const room = maxTokens - report.requestOverheadTokens;
    const part = (kind: string) => report.parts.find((candidate) => candidate.kind === kind);
    const tokens = (kind: string) => part(kind)?.tokens ?? 0;
    const firstRecentSeq = part('recent')!.seqRange!.from;
    // What each block had left when the item came up: its share for facts; for recall what recent turns left, at most its share.
    const factsRoom = Math.floor(room * hybridShares.facts) - tokens('facts');
    const recallRoom =
      Math.min(
        Math.max(minRecallTokens, Math.floor(room * hybridShares.recalled)),
        room - tokens('facts') - tokens('summary') - tokens('recent'),
      ) - tokens('recalled');

    const expected = report.excludedItems.map((item) =>
      item.kind === 'recalled' && item.conversationId === 'node-7' && item.seq! >= firstRecentSeq
        ? { ...item, reason: 'already_in_context', tokens: 0 }
        : // (≥: a line that fit by its own count is dropped again when the block's exact count is a token over.)
          {
            ...item,
            reason: 'over_budget',
            tokens: expect.toSatisfy(
              (cost: number) => cost >= (item.kind === 'fact' ? factsRoom : recallRoom),
            ) as unknown,
          },
    );
    expect(report.excludedItems).toEqual(expected);
    const reasons = (kind: string) =>
      new Set(report.excludedItems.filter((item) => item.kind === kind).map((item) => item.reason));
    expect(reasons('recalled')).toEqual(new Set(['already_in_context', 'over_budget']));
    expect(reasons('fact')).toEqual(new Set(['over_budget']));
    // Left out means not sent: no excluded item is among the parts' items.
    const sent = report.parts.flatMap((candidate) => candidate.items ?? []).map((item) => item.id);
    for (const item of report.excludedItems) expect(sent).not.toContain(item.id);
  });

  it('does not repeat a fact the recent turns state, and keeps one said before them', async () => {
    const store = new InMemoryStore();
    const memory = await memoryWithHistory(store);
    const user = { tenantId: 'default', userId: 'maren' };
    const { report: before } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 1200 });
    const recent = before.parts.find((part) => part.kind === 'recent')!.seqRange!;
    const base = {
      subject: 'user',
      confidence: 0.9,
      validFrom: '2025-05-28T10:00:00.000Z',
      extractor: 'test',
      createdAt: '2025-05-28T10:00:00.000Z',
      sourceConversationId: 'node-7',
    };
    const said = await store.insertFact(user, {
      ...base,
      attribute: 'callsign',
      value: 'KE7QTR',
      text: 'my callsign is KE7QTR',
      sourceSeqs: [recent.to],
    });
    const older = await store.insertFact(user, {
      ...base,
      attribute: 'home_town',
      value: 'Hood River',
      text: 'I live in Hood River',
      sourceSeqs: [2],
    });
    const elsewhere = await store.insertFact(user, {
      ...base,
      sourceConversationId: 'node-9',
      attribute: 'pet',
      value: 'Biscuit',
      text: 'my dog Biscuit',
      sourceSeqs: [recent.to],
    });

    const { messages, report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 1200 });

    expect(report.parts.find((part) => part.kind === 'recent')?.seqRange).toEqual(recent);
    const factIds = report.parts.find((part) => part.kind === 'facts')?.items?.map((item) => item.id);
    expect(factIds).toEqual(expect.arrayContaining([older.id, elsewhere.id]));
    expect(factIds).not.toContain(said.id);
    expect(report.excludedItems.filter((item) => item.kind === 'fact')).toEqual([
      expect.objectContaining({ id: said.id, reason: 'already_in_context' }),
    ]);
    expect(messages[0]?.content).not.toContain('KE7QTR');
    expect(messages[0]?.content).toContain('Hood River');
  });

  it('leaves out of the facts block a fact the summary already keeps as a line', async () => {
    const store = new InMemoryStore();
    const summarizer = {
      id: 'fixed',
      summarize: async () => ({
        content: '[2025-05-28]\n- home town: Hood River\nuser: Signal reports all day.',
        summarizer: 'fixed',
        inputTokens: 0,
        outputTokens: 12,
      }),
    };
    const memory = createMemory({
      store,
      knowledge: false,
      worker: { autoStart: false },
      compaction: { summarizer, settings: { triggerTokens: 400, keepRecentTokens: 150 } },
    });
    await memory.append(scope, filler(40));
    await memory.runPendingJobs();
    const user = { tenantId: 'default', userId: 'maren' };
    const base = {
      subject: 'user',
      confidence: 0.9,
      validFrom: '2025-05-28T10:00:00.000Z',
      extractor: 'test',
      createdAt: '2025-05-28T10:00:00.000Z',
      sourceConversationId: 'node-7',
      sourceSeqs: [2],
    };
    const home = await store.insertFact(user, {
      ...base,
      attribute: 'home_town',
      value: 'Hood River',
      text: 'I live in Hood River',
    });
    const callsign = await store.insertFact(user, {
      ...base,
      attribute: 'callsign',
      value: 'KE7QTR',
      text: 'my callsign is KE7QTR',
    });

    const { messages, report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 1200 });

    expect(report.parts.find((part) => part.kind === 'facts')?.items?.map((item) => item.id)).toEqual([callsign.id]);
    expect(report.excludedItems.filter((item) => item.kind === 'fact')).toEqual([
      expect.objectContaining({ id: home.id, reason: 'already_in_context' }),
    ]);
    expect(
      messages
        .map((message) => message.content)
        .join('\n')
        .split('Hood River'),
    ).toHaveLength(2);
    await memory.close();
  });

  it("sends a conversation alone when it fits whole: its own facts and turns already_in_context, other conversations' conversation_fits", async () => {
    const store = new InMemoryStore();
    const memory = createMemory({ store, worker: { autoStart: false }, compaction: false, knowledge: false });
    const user = { tenantId: 'default', userId: 'maren' };
    const elsewhere = { userId: 'maren', conversationId: 'node-9' };
    await memory.append(elsewhere, [
      { role: 'user', content: 'The relay LARCH-RIDGE moved to the north ridge.' },
      { role: 'assistant', content: 'Noted.' },
    ]);
    await memory.append(scope, [
      { role: 'user', content: 'The relay LARCH-RIDGE is up.' },
      { role: 'assistant', content: 'Good.' },
      { role: 'user', content: 'Is LARCH-RIDGE still up?' },
    ]);
    const base = {
      subject: 'LARCH-RIDGE',
      confidence: 0.9,
      validFrom: '2025-05-28T10:00:00.000Z',
      extractor: 'test',
      createdAt: '2025-05-28T10:00:00.000Z',
      sourceSeqs: [1],
    };
    const own = await store.insertFact(user, {
      ...base,
      attribute: 'status',
      value: 'up',
      text: 'The relay LARCH-RIDGE is up.',
      sourceConversationId: 'node-7',
    });
    const other = await store.insertFact(user, {
      ...base,
      attribute: 'location',
      value: 'north ridge',
      text: 'The relay LARCH-RIDGE moved to the north ridge.',
      sourceConversationId: 'node-9',
    });

    const { messages, report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 2000 });

    expect(messages.map((message) => message.content)).toEqual([
      'The relay LARCH-RIDGE is up.',
      'Good.',
      'Is LARCH-RIDGE still up?',
    ]);
    expect(report.parts.map((part) => part.kind)).toEqual(['recent']);
    expect(
      report.excludedItems.map((item) => [item.kind, item.conversationId ?? item.id, item.seq, item.reason]).sort(),
    ).toEqual(
      [
        ['fact', own.id, undefined, 'already_in_context'],
        ['fact', other.id, undefined, 'conversation_fits'],
        ['recalled', 'node-7', 1, 'already_in_context'],
        ['recalled', 'node-7', 3, 'already_in_context'],
        ['recalled', 'node-9', 1, 'conversation_fits'],
      ].sort(),
    );
    expect(report.sentTokens).toBe(report.fullHistoryTokens);
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
    expect(
      report.excludedItems
        .filter((item) => item.reason === 'already_in_context')
        .map((item) => item.seq)
        .sort(),
    ).toEqual([1, 3]);
  });

  it('gives a turn whose best match is a recent turn only the least room for snippets, unless recall is every-turn', async () => {
    const memory = await memoryWithHistory();
    const recalledTokens = (report: { parts: readonly { kind: string; tokens: number }[] }) =>
      report.parts.find((part) => part.kind === 'recalled')?.tokens ?? 0;
    // "Signal report 79" is the newest filler message, one of the recent turns; the others are older.
    const followUp = { policy: 'hybrid' as const, maxTokens: 1200, query: 'What did signal report 79 say?' };
    const asked = await memory.buildContext(scope, followUp);
    const firstRecentSeq = asked.report.parts.find((part) => part.kind === 'recent')!.seqRange!.from;
    const best = asked.report.excludedItems.find((item) => item.kind === 'recalled' && item.seq === 82);
    expect(best).toMatchObject({ reason: 'already_in_context' });
    expect(firstRecentSeq).toBeLessThanOrEqual(82);
    expect(asked.report.recall).toMatchObject({ mode: 'hybrid', bestInContext: true });
    expect(recalledTokens(asked.report)).toBeGreaterThan(0);
    expect(recalledTokens(asked.report)).toBeLessThanOrEqual(minRecallTokens);

    const everyTurn = await memory.buildContext(scope, { ...followUp, recall: 'every-turn' });
    expect(everyTurn.report.recall).toMatchObject({ mode: 'hybrid' });
    expect(everyTurn.report.recall?.bestInContext).toBeUndefined();
    expect(recalledTokens(everyTurn.report)).toBeGreaterThan(minRecallTokens);

    // The relay's name is only in the first turns, long summarized: the full share.
    const older = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 1200 });
    expect(older.report.recall).toMatchObject({ mode: 'hybrid' });
    expect(older.report.recall?.bestInContext).toBeUndefined();
    expect(recalledTokens(older.report)).toBeGreaterThan(minRecallTokens);
  });

  it('gives the newest turn precedence over memory when the budget is tiny', async () => {
    const memory = await memoryWithHistory();
    const { messages, report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 40 });
    expect(messages.at(-1)?.content).toContain('relay');
    expect(report.sentTokens).toBeLessThanOrEqual(40);
  });

  it("gives an assistant's recalled replies short snippets where it answers at length, and only there", async () => {
    const counter = createGptTokenCounter();
    const steps = (index: number, count: number) =>
      Array.from({ length: count }, (_, step) => `Step ${step + 1} for relay ${index}: check the panel.`).join(' ');
    // The recalled replies' lengths in tokens, for a chat of 60 exchanges of these lengths.
    const recalledReplies = async (userSteps: number, replySteps: number) => {
      const memory = createMemory({
        store: new InMemoryStore(),
        embedder: new HashedEmbedder(),
        worker: { autoStart: false },
        compaction: false,
      });
      for (let index = 0; index < 60; index += 1)
        await memory.append(scope, [
          { role: 'user', content: `My relay ${index} runs on solar. ${steps(index, userSteps)}` },
          { role: 'assistant', content: steps(index, replySteps) },
        ]);
      await memory.append(scope, {
        role: 'user',
        content: 'Which steps did you give me to check the panel of relay 3?',
      });
      await memory.runPendingJobs();
      const { messages } = await memory.buildContext(scope, {
        policy: 'hybrid',
        maxTokens: 2000,
        recall: 'every-turn',
      });
      const block = messages.find((message) => message.content.includes('retrieved from the full history'))!.content;
      const lines = block.split('\n').filter((line) => / assistant: /.test(line));
      return lines.map((line) => counter.countText(line.replace(/^.* assistant: /, '').replace(/…$/, '')));
    };

    // An assistant that answers at length (replies 20 times the user's turns): its snippets are short.
    const long = await recalledReplies(1, 20);
    expect(long.length).toBeGreaterThan(0);
    expect(Math.max(...long)).toBeLessThanOrEqual(48);
    // Two sides of like length (two people, a bot with short replies): a 100-token reply goes whole.
    const even = await recalledReplies(8, 8);
    expect(even.length).toBeGreaterThan(0);
    expect(Math.min(...even)).toBeGreaterThan(48);
  });
});

describe('the stable prefix (invariant 7)', () => {
  it('stays byte-identical from one request to the next until the next compaction, whatever the query, and the report says where it ends', async () => {
    const store = new InMemoryStore();
    const memory = await memoryWithHistory(store);
    const system = 'Be brief.';
    const first = await memory.buildContext(scope, {
      policy: 'hybrid',
      maxTokens: 1200,
      system,
      query: 'is the LARCH-RIDGE solar panel up?',
    });
    const { stable } = first.report;
    expect(first.report.parts.map((part) => part.kind)).toEqual(['system', 'facts', 'summary', 'recent', 'recalled']);
    // system, facts, summary and the raw turns before the newest user turn; recall and that turn come after.
    expect(stable.messageCount).toBe(first.messages.length - 2);
    expect(first.messages[stable.messageCount]?.content).toMatch(/^Earlier messages that may matter/);
    const counter = memory.tokenCounter;
    expect(stable.tokens).toBe(
      first.messages.slice(0, stable.messageCount).reduce((sum, message) => sum + counter.countMessage(message), 0),
    );

    // A fact learned after the compaction is in the raw turns; it does not reach the memory block before the next one.
    await store.insertFact(
      { tenantId: 'default', userId: 'maren' },
      {
        subject: 'user',
        attribute: 'callsign',
        value: 'KE7QTR',
        text: 'my callsign is KE7QTR',
        confidence: 0.9,
        validFrom: '2025-05-29T10:00:00.000Z',
        sourceSeqs: [],
        extractor: 'test',
        createdAt: new Date(Date.now() + 60_000).toISOString(),
      },
    );
    await memory.append(scope, [
      { role: 'assistant', content: 'It is LARCH-RIDGE.' },
      { role: 'user', content: 'and the channel report?' },
    ]);
    const second = await memory.buildContext(scope, {
      policy: 'hybrid',
      maxTokens: 1200,
      system,
      query: 'channel report?',
    });
    expect(second.messages.slice(0, stable.messageCount)).toEqual(first.messages.slice(0, stable.messageCount));
    expect(second.report.stable.messageCount).toBe(stable.messageCount + 2);
    expect(
      second.messages.slice(stable.messageCount, stable.messageCount + 2).map((message) => message.content),
    ).toEqual(["what was that relay's name again?", 'It is LARCH-RIDGE.']);
    expect(second.messages.map((message) => message.content).join('\n')).not.toContain('KE7QTR');
    await memory.close();
  });

  it('is the system prompt alone when the raw turns slide (a window), and the whole conversation when it fits', async () => {
    const memory = await memoryWithHistory();
    const windowed = await memory.buildContext(scope, { policy: 'window', windowTurns: 2, system: 'Be brief.' });
    expect(windowed.report.stable.messageCount).toBe(1);
    const short = createMemory({ store: new InMemoryStore(), worker: { autoStart: false }, compaction: false });
    await short.append(scope, [...filler(2), { role: 'user', content: 'channel report?' }]);
    const whole = await short.buildContext(scope, { policy: 'hybrid', maxTokens: 2000, system: 'Be brief.' });
    expect(whole.report.stable.messageCount).toBe(5);
    await memory.close();
    await short.close();
  });
});

describe('hybrid context under a saturated embedder', () => {
  /** A relay named once, 30 filler messages, and a question about it; its jobs (the embeddings) run. */
  async function appendRelayChat(memory: ReturnType<typeof createMemory>): Promise<void> {
    await memory.append(scope, [
      { role: 'user', content: 'My relay is called LARCH-RIDGE.' },
      ...filler(30),
      { role: 'user', content: 'which relay did I name?' },
    ]);
    await memory.runPendingJobs();
  }

  /** A memory over `embedder` (no worker, no compaction, `options` on top) holding the relay chat. */
  async function relayMemory(embedder: Embedder, options: Partial<MemoryOptions> = {}) {
    const memory = createMemory({
      store: new InMemoryStore(),
      embedder,
      worker: { autoStart: false },
      compaction: false,
      ...options,
    });
    await appendRelayChat(memory);
    return memory;
  }

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
    const memory = createMemory({
      store: new InMemoryStore(),
      embedder,
      queryEmbeddingTimeoutMs: 25,
      worker: { autoStart: false },
      compaction: false,
    });
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

  it('goes keyword-only at once, calling no embedding, when the embedder says it cannot meet the deadline', async () => {
    const embedder = new SaturatedEmbedder();
    const asked: number[] = [];
    Object.assign(embedder, { canEmbedWithin: (timeoutMs: number) => (asked.push(timeoutMs), !embedder.saturated) });
    // A deadline no test would wait out: the answer must come from canEmbedWithin, not from the timer.
    const memory = await relayMemory(embedder, { queryEmbeddingTimeoutMs: 600_000 });
    embedder.saturated = true;

    const { messages, report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 300 });

    expect(report.recall).toEqual({ mode: 'keyword-only', reason: 'embedding_deadline' });
    expect(messages.map((message) => message.content).join('\n')).toContain('LARCH-RIDGE');
    expect(asked).toEqual([600_000]);
    expect(embedder.querySignals).toHaveLength(0);
  });

  it("gives the query embedding the embedder's own deadline when the memory sets none (an endpoint's, past 30 ms)", async () => {
    /** Answers a query after 60 ms, like an embedding endpoint across the network. */
    class EndpointEmbedder extends HashedEmbedder {
      readonly queryTimeoutMs = 5000;
      readonly asked: number[] = [];
      canEmbedWithin(timeoutMs: number): boolean {
        this.asked.push(timeoutMs);
        return true;
      }
      override async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
        if (options.signal !== undefined) await new Promise((resolve) => setTimeout(resolve, 60));
        return super.embed(texts);
      }
    }
    const embedder = new EndpointEmbedder();
    const memory = await relayMemory(embedder);

    const { report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 300 });

    expect(report.recall).toMatchObject({ mode: 'hybrid' });
    expect(embedder.asked).toEqual([5000]);
    await memory.close();
  });

  /** Embeds stored messages like the hashed embedder; once down, every query embedding fails as an endpoint refusing its key does. */
  class FailingEmbedder extends HashedEmbedder {
    down = false;
    override embed(texts: readonly string[]): Promise<Float32Array[]> {
      return this.down
        ? Promise.reject(new MemoryError('unauthorized', 'http://embed.test/v1 rejected the API key (HTTP 401)'))
        : super.embed(texts);
    }
  }

  it('recalls keyword-only when the query embedding fails, says embedder_failed, and hands the error over', async () => {
    const embedder = new FailingEmbedder();
    const errors: unknown[] = [];
    const memory = await relayMemory(embedder, { onQueryEmbeddingError: (error) => errors.push(error) });
    embedder.down = true;

    const { messages, report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 300 });

    expect(report.recall).toEqual({ mode: 'keyword-only', reason: 'embedder_failed' });
    expect(messages.map((message) => message.content).join('\n')).toContain('LARCH-RIDGE');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'unauthorized' });
    // memory.searchRecall degrades as a context does, and says so; memory.recall still shows the failure.
    const searched = await memory.searchRecall(scope, 'which solar relay did I name?');
    expect(searched).toMatchObject({ mode: 'keyword-only', reason: 'embedder_failed' });
    expect(searched.hits[0]?.message.content).toContain('LARCH-RIDGE');
    expect(errors).toHaveLength(2);
    await expect(memory.recall(scope, 'which solar relay did I name?')).rejects.toMatchObject({ code: 'unauthorized' });
    await memory.close();
  });

  it('builds the context without a handler too', async () => {
    const embedder = new FailingEmbedder();
    const memory = await relayMemory(embedder);
    embedder.down = true;

    const { report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 300 });

    expect(report.recall).toEqual({ mode: 'keyword-only', reason: 'embedder_failed' });
    await memory.close();
  });

  it('throws the abort of a caller who gives up during the query embedding, not a keyword-only context', async () => {
    const embedder = new SaturatedEmbedder();
    // The embedding fails as an aborted endpoint request does, once the signal aborts.
    Object.assign(embedder, {
      embed: (texts: readonly string[], options: { signal?: AbortSignal } = {}) =>
        !embedder.saturated
          ? HashedEmbedder.prototype.embed.call(embedder, texts)
          : new Promise((_, reject) =>
              options.signal?.addEventListener('abort', () => reject(new MemoryError('model_failed', 'aborted'))),
            ),
    });
    const errors: unknown[] = [];
    const memory = await relayMemory(embedder, {
      queryEmbeddingTimeoutMs: 600_000,
      onQueryEmbeddingError: (error) => errors.push(error),
    });
    embedder.saturated = true;
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('the client hung up')), 20);

    await expect(
      memory.buildContext(scope, { policy: 'hybrid', maxTokens: 300, signal: controller.signal }),
    ).rejects.toThrow();
    expect(errors).toHaveLength(0);
    await memory.close();
  });

  it('says embedder_failed without embedding when the embedder refuses at once while it is failing', async () => {
    const embedder = new SaturatedEmbedder();
    Object.assign(embedder, { canEmbedWithin: () => false, failing: true });
    const memory = await relayMemory(embedder, { queryEmbeddingTimeoutMs: 600_000 });
    embedder.saturated = true;

    const { report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 300 });

    expect(report.recall).toEqual({ mode: 'keyword-only', reason: 'embedder_failed' });
    expect(embedder.querySignals).toHaveLength(0);
    await memory.close();
  });

  it('embeds appended messages at once and the query without a deadline when the embedder has embedSync', async () => {
    let asyncCalls = 0;
    const inThread = {
      model: 'bag-of-words-64',
      dimensions: 64,
      embed: async (texts: readonly string[]) => ((asyncCalls += 1), texts.map(bagOfWords)),
      embedSync: (texts: readonly string[]) => texts.map(bagOfWords),
    };
    const store = new InMemoryStore();
    const memory = createMemory({
      store,
      embedder: inThread,
      queryEmbeddingTimeoutMs: 1,
      worker: { autoStart: false },
      compaction: false,
      knowledge: false,
    });
    await memory.append(scope, [
      { role: 'user', content: 'My relay is called LARCH-RIDGE.' },
      ...filler(30),
      { role: 'user', content: 'which relay did I name?' },
    ]);

    // No job: the vectors were written with the messages.
    expect(await store.listUnembeddedMessages({ tenantId: 'default', ...scope }, inThread.model, 100)).toEqual([]);
    expect(await memory.runPendingJobs()).toBe(0);
    const { report } = await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 300 });
    expect(report.recall).toEqual({ mode: 'hybrid', model: inThread.model });
    expect(asyncCalls).toBe(0);
  });

  it('reports hybrid recall when the query embedding is in time, and keyword-only without an embedder', async () => {
    const withEmbedder = createMemory({
      store: new InMemoryStore(),
      embedder: new HashedEmbedder(),
      worker: { autoStart: false },
      compaction: false,
    });
    const without = createMemory({ store: new InMemoryStore(), worker: { autoStart: false }, compaction: false });
    for (const memory of [withEmbedder, without])
      await memory.append(scope, [...filler(3), { role: 'user', content: 'channel report?' }]);
    await withEmbedder.runPendingJobs();

    expect((await withEmbedder.buildContext(scope, { policy: 'hybrid', maxTokens: 300 })).report.recall).toEqual({
      mode: 'hybrid',
      model: 'hashed-bow-256',
    });
    expect((await without.buildContext(scope, { policy: 'hybrid', maxTokens: 300 })).report.recall).toEqual({
      mode: 'keyword-only',
      reason: 'no_embedder',
    });
    expect(
      (await without.buildContext(scope, { policy: 'token-window', maxTokens: 300 })).report.recall,
    ).toBeUndefined();
  });
});

/** A bag of words in 64 buckets, computed on the spot: what an in-thread embedder's `embedSync` gives. */
function bagOfWords(text: string): Float32Array {
  const vector = new Float32Array(64);
  for (const word of text.toLowerCase().match(/[a-z0-9-]+/g) ?? []) {
    let hash = 7;
    for (const char of word) hash = (hash * 31 + char.charCodeAt(0)) % 64;
    vector[hash]! += 1;
  }
  return vector;
}

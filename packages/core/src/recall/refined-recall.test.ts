import { describe, expect, it, vi } from 'vitest';
import { createMemory } from '../engine/create-memory.js';
import { isMemoryError } from '../errors/memory-error.js';
import { embedConversation } from '../jobs/embed-conversation.js';
import { makeNewMessage } from '../testing/conformance-fixtures.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import type { Embedder } from './embedder.js';
import { HashedEmbedder } from './hashed-embedder.js';
import { rankRecallCandidates, vectorSpaceOf } from './rank-recall-candidates.js';
import {
  collectRecallCandidates,
  recallTuning,
  refinerChatWindow,
  refinerGapLimit,
  refinerGapWindow,
  refinerRanksConversation,
  searchRecall,
} from './recall.js';

// A "better model" for the test: it maps words of one meaning to one dimension, so it finds a paraphrase
// that shares no word with the query, which the hashed bag of words cannot.
const concepts: Record<string, number> = {
  invoicing: 0,
  billing: 0,
  invoices: 0,
  datastore: 1,
  database: 1,
  records: 1,
  hiking: 2,
  trail: 2,
  weather: 3,
  rain: 3,
};

class ConceptEmbedder implements Embedder {
  readonly model = 'concepts@1';
  readonly dimensions = 8;
  calls = 0;
  constructor(private readonly available: () => boolean = () => true) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls += 1;
    return texts.map((text) => {
      const vector = new Float32Array(this.dimensions);
      for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
        const at = concepts[word];
        vector[at ?? 7] = (vector[at ?? 7] ?? 0) + (at === undefined ? 0.05 : 1);
      }
      const norm = Math.hypot(...vector) || 1;
      return vector.map((value) => value / norm);
    });
  }
  canEmbedWithin(): boolean {
    return this.available();
  }
}

const user = { tenantId: 't', userId: 'maren' };
const scope = { ...user, conversationId: 'ops' };
const lines = [
  'The billing service keeps its records in a database we run ourselves.',
  'We walked the ridge trail on Sunday.',
  'Rain all week, so no hiking.',
  'I moved the relay to the north mast.',
  'My sister visits in March.',
  'Our dog sits behind the sofa when it storms.',
];
const query = 'What datastore sits behind our invoicing backend?';

const newMessage = (content: string, createdAt: string) => makeNewMessage(content, { createdAt });

async function storeWith(...texts: string[]) {
  const store = new InMemoryStore();
  await store.appendMessages(
    scope,
    texts.map((content, index) => newMessage(content, `2026-11-0${1 + (index % 9)}T10:00:00.000Z`)),
  );
  return store;
}

describe('recall with a refiner beside the embedder', () => {
  const embedder = new HashedEmbedder();

  it("ranks in the refiner's space once its vectors are there, finding a paraphrase the embedder misses", async () => {
    const store = await storeWith(...lines);
    await embedConversation({ store, embedder }, scope);
    const alone = await searchRecall({ store, embedder }, user, query, { k: 3 });
    expect(alone.model).toBe(embedder.model);
    const refiner = new ConceptEmbedder();
    // Before the refine job ran: every message lacks the refiner's vector, few enough to keep their places.
    const before = await searchRecall({ store, embedder, refiner }, user, query, { k: 3 });
    expect(before.model).toBe(refiner.model);
    expect(before.hits.map((hit) => hit.message.seq)).toEqual(alone.hits.map((hit) => hit.message.seq));
    await embedConversation({ store, embedder: refiner }, scope);
    const refined = await searchRecall({ store, embedder, refiner }, user, query, { k: 3 });
    expect(refined).toMatchObject({ mode: 'hybrid', model: refiner.model });
    expect(refined.hits.find((hit) => hit.message.content === lines[0])?.explain.vectorRank).toBe(1);
    const unrefined = alone.hits.find((hit) => hit.message.content === lines[0]);
    expect(unrefined?.explain.vectorRank).not.toBe(1);
  });

  it("keeps a message without the refiner's vector in the vector search, at the embedder's rank", async () => {
    const store = await storeWith(...lines);
    await embedConversation({ store, embedder }, scope);
    const refiner = new ConceptEmbedder();
    await embedConversation({ store, embedder: refiner }, scope);
    // A new message: the embedder's vector is written, the refine job has not run yet.
    const [fresh] = await store.appendMessages(scope, [
      newMessage('The invoicing backend now writes to PostgreSQL.', '2026-11-20T10:00:00.000Z'),
    ]);
    await embedConversation({ store, embedder }, scope);
    expect(await store.listUnembeddedMessages(scope, refiner.model, 10)).toHaveLength(1);
    const base = await searchRecall({ store, embedder }, user, query, { k: 10, candidates: 10 });
    const baseRank = base.hits.findIndex((hit) => hit.message.seq === fresh!.seq);
    expect(baseRank).toBeGreaterThanOrEqual(0);
    const refined = await searchRecall({ store, embedder, refiner }, user, query, { k: 10, candidates: 10 });
    expect(refined.model).toBe(refiner.model);
    const hit = refined.hits.find((each) => each.message.seq === fresh!.seq);
    expect(hit?.explain.vectorRank).toBeDefined();
    expect(refined.hits[0]!.message.content).toMatch(/billing|invoicing/);
  });

  it("ranks in the embedder's space when the refiner's backlog is large or it cannot answer in time", async () => {
    const many = Array.from({ length: refinerGapLimit + 1 }, (_, index) => `note ${index} about the billing database`);
    const store = await storeWith(...many);
    await embedConversation({ store, embedder }, scope);
    const refiner = new ConceptEmbedder();
    const behind = await searchRecall({ store, embedder, refiner }, user, query, { k: 3 });
    expect(behind).toMatchObject({ mode: 'hybrid', model: embedder.model });
    expect(refiner.calls).toBe(0);
    await embedConversation({ store, embedder: refiner }, scope);
    let available = false;
    const busy = new ConceptEmbedder(() => available);
    const late = await searchRecall({ store, embedder, refiner: busy, queryEmbeddingTimeoutMs: 30 }, user, query, {
      k: 3,
    });
    expect(late).toMatchObject({ mode: 'hybrid', model: embedder.model });
    available = true;
    const inTime = await searchRecall({ store, embedder, refiner: busy, queryEmbeddingTimeoutMs: 30 }, user, query, {
      k: 3,
    });
    expect(inTime.model).toBe(refiner.model);
  });

  it("ranks in the embedder's space when the refiner's query embedding fails and the caller takes the error", async () => {
    const store = await storeWith(...lines);
    await embedConversation({ store, embedder }, scope);
    const refiner = new ConceptEmbedder();
    await embedConversation({ store, embedder: refiner }, scope);
    const alone = await searchRecall({ store, embedder }, user, query, { k: 3 });
    refiner.embed = () => Promise.reject(new Error('the refiner thread died'));
    const errors: unknown[] = [];

    const degraded = await searchRecall(
      { store, embedder, refiner, onQueryEmbeddingError: (error) => errors.push(error) },
      user,
      query,
      { k: 3 },
    );

    expect(degraded).toMatchObject({ mode: 'hybrid', model: embedder.model });
    expect(degraded.hits.map((hit) => hit.message.seq)).toEqual(alone.hits.map((hit) => hit.message.seq));
    expect(errors).toEqual([new Error('the refiner thread died')]);
    await expect(searchRecall({ store, embedder, refiner }, user, query, { k: 3 })).rejects.toThrow(/thread died/);
  });

  it("counts the refiner's backlog among a conversation's newest refinerGapWindow messages only", async () => {
    const old = Array.from(
      { length: refinerGapLimit + 1 },
      (_, index) => `old note ${index} about the billing database`,
    );
    const recent = Array.from({ length: refinerGapWindow }, (_, index) => `note ${index} on the ridge trail`);
    const store = await storeWith(...old, ...recent);
    await embedConversation({ store, embedder }, scope);
    const refiner = new ConceptEmbedder();
    const refine = async (from: number, to: number) => {
      const messages = (await store.listMessages(scope)).slice(from, to);
      const vectors = await refiner.embed(messages.map((message) => message.content));
      await store.upsertEmbeddings(
        scope,
        refiner.model,
        messages.map((message, index) => ({ seq: message.seq, vector: vectors[index]! })),
      );
    };
    // The newest refined, more than refinerGapLimit older ones not (the job refines oldest first, so it
    // leaves no such hole; another writer of the store might): the gap check does not read that far back.
    await refine(old.length, old.length + recent.length);
    const refined = await searchRecall({ store, embedder, refiner }, user, query, { k: 3 });
    expect(refined.model).toBe(refiner.model);
    // More than refinerGapLimit of the newest without the refiner's vectors: the embedder's space.
    const [first] = await store.appendMessages(
      scope,
      old.map((content) => newMessage(content, '2026-11-20T10:00:00.000Z')),
    );
    await embedConversation({ store, embedder }, scope);
    const behind = await searchRecall({ store, embedder, refiner }, user, query, { k: 3 });
    expect(behind.model).toBe(embedder.model);
    await refine(first!.seq - 1, first!.seq - 1 + old.length);
    expect((await searchRecall({ store, embedder, refiner }, user, query, { k: 3 })).model).toBe(refiner.model);
  });
});

describe("recall's vector space by the kind of chat (refinerChatRatio)", () => {
  const embedder = new HashedEmbedder();
  // The same exchange twice: between two people (turns of like length), and a person with an assistant
  // whose replies are several times as long as the user's turns.
  const chat = async (assistantSays: (line: string) => string) => {
    const store = new InMemoryStore();
    await store.appendMessages(
      scope,
      lines.flatMap((line, index) => [
        makeNewMessage(line, { createdAt: `2026-11-0${1 + index}T10:00:00.000Z` }),
        makeNewMessage(assistantSays(line), { role: 'assistant', createdAt: `2026-11-0${1 + index}T10:01:00.000Z` }),
      ]),
    );
    const refiner = new ConceptEmbedder();
    await embedConversation({ store, embedder }, scope);
    await embedConversation({ store, embedder: refiner }, scope);
    return { store, refiner };
  };
  const people = () => chat((line) => `Oh? ${line.split(' ').reverse().join(' ')}`);
  const assistant = () =>
    chat(
      (line) =>
        `Here is what I can tell you about that, in detail. ${line} I hope this helps; tell me if you want more on it.`,
    );

  it("ranks in the refiner's space where replies are short, in the embedder's where they are long", async () => {
    const tuning = { refinerChatRatio: 2 };
    const between = await people();
    const refined = await searchRecall({ store: between.store, embedder, refiner: between.refiner }, user, query, {
      k: 3,
      tuning,
    });
    expect(refined.model).toBe(between.refiner.model);
    const withAssistant = await assistant();
    const dependencies = { store: withAssistant.store, embedder, refiner: withAssistant.refiner };
    const plain = await searchRecall(dependencies, user, query, { k: 3, tuning });
    expect(plain.model).toBe(embedder.model);
    const alone = await searchRecall({ store: withAssistant.store, embedder }, user, query, { k: 3, tuning });
    expect(plain.hits.map((hit) => [hit.message.seq, hit.explain.vectorRank])).toEqual(
      alone.hits.map((hit) => [hit.message.seq, hit.explain.vectorRank]),
    );
    // At the top of its range the ratio lets the refiner's space rank whatever the chat.
    const always = await searchRecall(dependencies, user, query, { k: 3, tuning: { refinerChatRatio: 100 } });
    expect(always.model).toBe(withAssistant.refiner.model);
  });

  it("does not embed the query in the refiner's space where the ranking would not use it", async () => {
    const tuning = { refinerChatRatio: 2 };
    const withAssistant = await assistant();
    const dependencies = { store: withAssistant.store, embedder, refiner: withAssistant.refiner };
    const searched = vi.spyOn(withAssistant.store, 'searchVector');
    const before = withAssistant.refiner.calls;
    const plain = await searchRecall(dependencies, user, query, { k: 3, tuning });
    expect(withAssistant.refiner.calls).toBe(before);
    expect(searched.mock.calls.map(([, model]) => model)).toEqual([embedder.model]);
    // Ranked as a benchmark ranks the candidates it collected with both lists.
    const collected = await collectRecallCandidates(dependencies, user, query, { candidates: 50, secondHop: true });
    expect(collected.refined).toBeDefined();
    expect(vectorSpaceOf(collected, { ...recallTuning, ...tuning })).toBe('embedder');
    expect(plain.hits.map((hit) => hit.message.seq)).toEqual(
      rankRecallCandidates(collected, { ...recallTuning, ...tuning }, 3)
        .slice(0, 3)
        .map((hit) => hit.message.seq),
    );
    // A two-person chat, and the ratio's top, still search in the refiner's space.
    searched.mockClear();
    const collecting = withAssistant.refiner.calls;
    await searchRecall(dependencies, user, query, { k: 3, tuning: { refinerChatRatio: 100 } });
    expect(withAssistant.refiner.calls).toBe(collecting + 1);
    expect(searched.mock.calls.map(([, model]) => model)).toEqual([embedder.model, withAssistant.refiner.model]);
    const between = await people();
    const calls = between.refiner.calls;
    await searchRecall({ store: between.store, embedder, refiner: between.refiner }, user, query, { k: 3, tuning });
    expect(between.refiner.calls).toBe(calls + 1);
  });
});

describe('createMemory with a refiner', () => {
  it('refuses a refiner without an embedder, or of the same model', () => {
    const refiner = { embedder: new ConceptEmbedder() };
    for (const options of [{ refiner }, { embedder: new ConceptEmbedder(), refiner }]) {
      let error: unknown;
      try {
        createMemory({ store: new InMemoryStore(), ...options });
      } catch (caught) {
        error = caught;
      }
      expect(isMemoryError(error, 'invalid_input')).toBe(true);
    }
  });

  it('adds the refined vectors only while idle() says so, and the embed job never waits for them', async () => {
    const store = new InMemoryStore();
    let idle = false;
    const refiner = new ConceptEmbedder();
    const memory = createMemory({
      store,
      embedder: new HashedEmbedder(),
      refiner: { embedder: refiner, idle: () => idle },
      worker: { pollIntervalMs: 5 },
    });
    try {
      await memory.append(scope, [{ role: 'user', content: lines[0]! }]);
      await vi.waitFor(async () =>
        expect(await store.listUnembeddedMessages(scope, 'hashed-bow-256', 10)).toHaveLength(0),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await store.listUnembeddedMessages(scope, refiner.model, 10)).toHaveLength(1);
      const backlog = await memory.jobBacklog({ tenantId: 't' });
      expect(backlog.byKind.refine.pending).toBe(1);
      expect(backlog.byKind.embed.pending).toBe(0);
      idle = true;
      await vi.waitFor(async () =>
        expect(await store.listUnembeddedMessages(scope, refiner.model, 10)).toHaveLength(0),
      );
      const built = await memory.buildContext(scope, { policy: 'hybrid', query: 'what datastore do we use?' });
      expect(built.report.recall).toMatchObject({ mode: 'hybrid', model: refiner.model });
    } finally {
      await memory.close();
    }
  });

  it('runPendingJobs refines whatever idle() says', async () => {
    const store = new InMemoryStore();
    const refiner = new ConceptEmbedder();
    const memory = createMemory({
      store,
      embedder: new HashedEmbedder(),
      refiner: { embedder: refiner, idle: () => false },
      worker: { autoStart: false },
    });
    await memory.append(scope, [{ role: 'user', content: lines[0]! }]);
    expect(await memory.runPendingJobs()).toBeGreaterThanOrEqual(2);
    expect(await store.listUnembeddedMessages(scope, refiner.model, 10)).toHaveLength(0);
    expect((await memory.recall(user, query)).length).toBe(1);
    await memory.close();
  });

  // Decision 0047: a chat whose assistant answers at length ranks in the embedder's space, so it is not refined.
  const exchanges = (replyLength: number, count = lines.length) =>
    Array.from({ length: count }, (_, index) => [
      { role: 'user' as const, content: lines[index % lines.length]! },
      { role: 'assistant' as const, content: `Sure. ${'word '.repeat(replyLength)}`.trim() },
    ]).flat();
  // A memory that refines whenever asked to (idle), its jobs run by hand.
  const refiningMemory = () => {
    const store = new InMemoryStore();
    const refiner = new ConceptEmbedder();
    const embedder = new HashedEmbedder();
    const memory = createMemory({
      store,
      embedder,
      refiner: { embedder: refiner, idle: () => true },
      worker: { autoStart: false },
    });
    return { store, refiner, embedder, memory };
  };

  it("does not refine a chat whose assistant answers at length, and recall ranks it in the embedder's space", async () => {
    const { store, refiner, embedder, memory } = refiningMemory();
    try {
      await memory.append(scope, exchanges(100));
      await memory.runPendingJobs();
      expect(refiner.calls).toBe(0);
      expect(await store.listUnembeddedMessages(scope, refiner.model, 100)).toHaveLength(lines.length * 2);
      expect((await memory.jobBacklog({ tenantId: 't' })).byKind.refine.pending).toBe(0);
      const searched = await searchRecall({ store, embedder, refiner }, user, 'the billing database records');
      expect(searched).toMatchObject({ mode: 'hybrid', model: embedder.model });
      expect(searched.hits[0]?.message.content).toBe(lines[0]);
      // Two people in the same user's other conversation are refined.
      const other = { ...user, conversationId: 'friends' };
      await memory.append(other, exchanges(2));
      await memory.runPendingJobs();
      expect(await store.listUnembeddedMessages(other, refiner.model, 100)).toHaveLength(0);
    } finally {
      await memory.close();
    }
  });

  it("ranks a user's refined conversation in the refiner's space beside one it leaves alone", async () => {
    const { store, refiner, embedder, memory } = refiningMemory();
    try {
      // An assistant answering at length (not refined), more messages than the gap check lets pass.
      await memory.append(scope, exchanges(100, refinerGapLimit));
      // Two people in the same user's other conversation, refined: the paraphrase is there.
      const friends = { ...user, conversationId: 'friends' };
      const paraphrase = 'Billing records, every one of them.';
      await memory.append(friends, [
        { role: 'user', content: 'Our backend sits behind a proxy now.' },
        { role: 'assistant', content: 'The proxy change waits until after the audit.' },
        { role: 'user', content: 'How are the books kept these days?' },
        { role: 'assistant', content: paraphrase },
      ]);
      await memory.runPendingJobs();
      expect(await store.listUnembeddedMessages(scope, refiner.model, 1000)).toHaveLength(2 * refinerGapLimit);
      expect(await store.listUnembeddedMessages(friends, refiner.model, 10)).toHaveLength(0);
      // Whatever the candidates' reply length ratio says (at its top the ratio lets the refiner's space rank).
      const tuning = { refinerChatRatio: 100 };
      const candidates = 2 * refinerGapLimit + 4;
      const plain = await searchRecall({ store, embedder }, user, query, { k: candidates, candidates, tuning });
      const searched = await searchRecall({ store, embedder, refiner }, user, query, {
        k: candidates,
        candidates,
        tuning,
      });
      expect(searched).toMatchObject({ mode: 'hybrid', model: refiner.model });
      // The paraphrase is the refined conversation's best vector hit, where the embedder put it lower.
      const friendsRanks = (hits: typeof plain.hits) =>
        hits
          .filter((hit) => hit.conversationId === 'friends')
          .sort((a, b) => a.explain.vectorRank! - b.explain.vectorRank!)
          .map((hit) => hit.message.content);
      expect(friendsRanks(searched.hits)[0]).toBe(paraphrase);
      expect(friendsRanks(plain.hits)[0]).not.toBe(paraphrase);
      // The conversation left alone keeps every hit, in the embedder's order.
      const order = (hits: typeof plain.hits) =>
        hits
          .filter((hit) => hit.conversationId === scope.conversationId && hit.explain.vectorRank !== undefined)
          .sort((a, b) => a.explain.vectorRank! - b.explain.vectorRank!)
          .map((hit) => hit.message.seq);
      expect(order(searched.hits)).toEqual(order(plain.hits));
      expect(order(searched.hits)).toHaveLength(2 * refinerGapLimit);
      // With the library's ratio: a question whose keyword hits are the refined chat's is judged by that
      // chat's replies, not by the long ones the vector list brings from the other conversation.
      const topical = 'Is the proxy still in front of our backend?';
      const judged = await searchRecall({ store, embedder, refiner }, user, topical, { k: candidates, candidates });
      expect(judged.hits.filter((hit) => hit.conversationId === scope.conversationId).length).toBeGreaterThan(64);
      expect(judged.model).toBe(refiner.model);
      expect(judged.longReplies).toBe(false);
      // Alone, the conversation left alone ranks in the embedder's space, the refiner not asked.
      const calls = refiner.calls;
      const one = await searchRecall({ store, embedder, refiner }, user, query, {
        conversations: [scope.conversationId],
        tuning,
      });
      expect(one.model).toBe(embedder.model);
      expect(refiner.calls).toBe(calls);
    } finally {
      await memory.close();
    }
  });

  it('decides on the newest messages, with a margin of twice refinerChatRatio', async () => {
    const ratioOf = async (messages: ReturnType<typeof exchanges>) => {
      const store = new InMemoryStore();
      await store.appendMessages(
        scope,
        messages.map((message) => makeNewMessage(message.content, { role: message.role })),
      );
      return refinerRanksConversation(store, scope);
    };
    const userLength = lines.reduce((sum, line) => sum + line.length, 0) / lines.length;
    // "Sure. " + n × "word " less the trailing space: 5n + 5 characters.
    const replyWords = (ratio: number) => Math.round((ratio * userLength - 5) / 5);
    const line = 2 * recallTuning.refinerChatRatio;
    expect(await ratioOf(exchanges(replyWords(line * 0.9)))).toBe(true);
    expect(await ratioOf(exchanges(replyWords(line * 1.1)))).toBe(false);
    // Long replies long ago, short ones in the newest window: refined again.
    const window = refinerChatWindow / 2;
    expect(await ratioOf([...exchanges(100, 30), ...exchanges(2, window)])).toBe(true);
    expect(await ratioOf([...exchanges(2, 30), ...exchanges(100, window)])).toBe(false);
  });

  it('stops refining between batches once the conversation has become a chat it does not refine', async () => {
    const store = new InMemoryStore();
    const append = (messages: ReturnType<typeof exchanges>) =>
      store.appendMessages(
        scope,
        messages.map((message) => makeNewMessage(message.content, { role: message.role })),
      );
    await append(exchanges(2, 4));
    const refiner = new ConceptEmbedder();
    const embed = refiner.embed.bind(refiner);
    // While the first batch is refined, the assistant starts answering at length.
    refiner.embed = async (texts) => {
      if (refiner.calls === 0) await append(exchanges(200, 20));
      return embed(texts);
    };
    const refined = await embedConversation({ store, embedder: refiner }, scope, undefined, undefined, 4, () =>
      refinerRanksConversation(store, scope),
    );
    expect(refined).toBe(4);
    expect(refiner.calls).toBe(1);
    expect(await store.listUnembeddedMessages(scope, refiner.model, 100)).toHaveLength(8 + 40 - 4);
  });
});

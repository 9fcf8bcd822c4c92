import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { createMemory } from './create-memory.js';

const scope = { conversationId: 'node-7' };
const isInvalid = (error: unknown) => isMemoryError(error, 'invalid_input');

describe('createMemory', () => {
  it('stores appended messages with seq, time and token count', async () => {
    const memory = createMemory({ store: new InMemoryStore(), now: () => Date.UTC(2024, 4, 8, 13, 56) });
    const [stored] = await memory.append(scope, { role: 'user', content: 'hello world' });
    expect(stored).toMatchObject({ seq: 1, createdAt: '2024-05-08T13:56:00.000Z', tokens: 6 });
  });

  it('stores nothing of a batch when one message is invalid', async () => {
    const memory = createMemory({ store: new InMemoryStore() });
    const batch = [
      { role: 'user', content: 'fine' },
      { role: 'robot', content: 'bad' },
    ];
    await expect(memory.append(scope, batch as never)).rejects.toSatisfy(isInvalid);
    await expect(memory.append(scope, [])).rejects.toSatisfy(isInvalid);
    expect(await memory.listMessages(scope)).toEqual([]);
  });

  it('checks a tool result against the stored tail of the conversation', async () => {
    const memory = createMemory({ store: new InMemoryStore() });
    await memory.append(scope, [
      { role: 'user', content: 'battery?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c1', type: 'function', function: { name: 'battery', arguments: '{}' } }],
      },
    ]);
    await expect(memory.append(scope, { role: 'tool', toolCallId: 'other', content: '71%' })).rejects.toSatisfy(
      isInvalid,
    );
    const [result] = await memory.append(scope, { role: 'tool', toolCallId: 'c1', content: '71%' });
    expect(result?.seq).toBe(3);
  });

  it('applies a configured content limit', async () => {
    const memory = createMemory({ store: new InMemoryStore(), limits: { maxContentChars: 150 } });
    await expect(memory.append(scope, { role: 'user', content: 'x'.repeat(151) })).rejects.toSatisfy(isInvalid);
  });

  it('rejects bad context defaults at construction', () => {
    expect(() => createMemory({ store: new InMemoryStore(), context: { maxTokens: -5 } })).toThrow(/maxTokens/);
  });

  it('replaces conversation metadata and reports it in stats with the messages per role', async () => {
    const memory = createMemory({ store: new InMemoryStore(), knowledge: false, compaction: false });
    expect(await memory.updateConversation(scope, { metadata: { memory_type: 'buffer' } })).toBeUndefined();
    await memory.append(scope, [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'battery?' },
      { role: 'assistant', content: '71%' },
      { role: 'user', content: 'thanks' },
    ]);
    expect((await memory.stats(scope))?.metadata).toBeUndefined();
    await memory.updateConversation(scope, { metadata: { memory_type: 'buffer', max_turns: 4 } });
    const updated = await memory.updateConversation(
      { ...scope, tenantId: 'default' },
      { metadata: { memory_type: 'window' } },
    );
    expect(updated).toMatchObject({ conversationId: 'node-7', messageCount: 4, metadata: { memory_type: 'window' } });
    expect(await memory.stats(scope)).toMatchObject({ metadata: { memory_type: 'window' }, messageCount: 4 });
    expect((await memory.stats(scope))?.roles).toEqual({ system: 1, user: 2, assistant: 1 });
    await expect(memory.updateConversation(scope, { metadata: ['not', 'an', 'object'] as never })).rejects.toSatisfy(
      isInvalid,
    );
    await expect(memory.updateConversation(scope, {} as never)).rejects.toSatisfy(isInvalid);
    await expect(memory.updateConversation({ conversationId: '' }, { metadata: {} })).rejects.toSatisfy(isInvalid);
    expect((await memory.stats(scope))?.metadata).toEqual({ memory_type: 'window' });
  });

  it('erases a conversation or a whole user, and refuses an erase without a target', async () => {
    const memory = createMemory({ store: new InMemoryStore() });
    await memory.append({ userId: 'u1', conversationId: 'a' }, { role: 'user', content: 'x' });
    await memory.append({ userId: 'u1', conversationId: 'b' }, { role: 'user', content: 'y' });
    await memory.append({ userId: 'u2', conversationId: 'a' }, { role: 'user', content: 'z' });
    expect(await memory.erase({ userId: 'u1', conversationId: 'a' })).toEqual({ conversations: 1, messages: 1 });
    expect(await memory.erase({ userId: 'u1' })).toEqual({ conversations: 1, messages: 1 });
    await expect(memory.erase({})).rejects.toSatisfy(isInvalid);
    expect((await memory.listConversations()).items.map((c) => c.userId)).toEqual(['u2']);
  });
});

describe('createMemory knowledge', () => {
  const user = { userId: 'maren' };
  const node = { ...user, conversationId: 'node-7' };

  it('extracts facts and the entity graph in the background, with supersession', async () => {
    const memory = createMemory({ store: new InMemoryStore(), worker: { autoStart: false } });
    await memory.append(node, [
      {
        role: 'user',
        content: "I'm Maren, callsign N0CALL. I live in Hood River.",
        createdAt: '2025-05-28T10:00:00.000Z',
      },
      { role: 'assistant', content: 'Noted, Maren.', createdAt: '2025-05-28T10:00:30.000Z' },
      { role: 'user', content: 'my buddy Tomas joins the trip on 14 June', createdAt: '2025-05-28T10:01:00.000Z' },
      { role: 'assistant', content: 'Noted.', createdAt: '2025-05-28T10:01:30.000Z' },
      { role: 'user', content: 'actually we moved the trip to 21 June', createdAt: '2025-06-01T09:00:00.000Z' },
    ]);
    await memory.runPendingJobs();
    const current = await memory.facts.list(user);
    const value = (attribute: string) => current.find((fact) => fact.attribute === attribute)?.value;
    expect(value('name')).toBe('Maren');
    expect(value('callsign')).toBe('N0CALL');
    expect(current.filter((fact) => fact.attribute === 'trip_date').map((fact) => fact.value)).toEqual([
      expect.stringContaining('21 June'),
    ]);
    const history = await memory.facts.history(user, { attribute: 'trip_date' });
    expect(history.length).toBeGreaterThanOrEqual(2);
    expect(history[0]?.supersededBy).toBe(history[1]?.id);
    const around = await memory.graph.neighbours(user, 'Tomas');
    expect(around.entities.map((entity) => entity.name)).toEqual(expect.arrayContaining(['Tomas']));
    expect(around.relations.length).toBeGreaterThan(0);
  });

  it('puts a fact by hand, superseding a single-valued one and keeping history', async () => {
    const memory = createMemory({ store: new InMemoryStore(), worker: { autoStart: false }, knowledge: false });
    const first = await memory.facts.put(user, { attribute: 'home town', value: 'Hood River' });
    expect(first).toMatchObject({ attribute: 'home_town', extractor: 'api', subject: 'user' });
    expect((await memory.facts.put(user, { attribute: 'home_town', value: 'hood river' })).id).toBe(first.id);
    const second = await memory.facts.put(user, { attribute: 'home_town', value: 'Bend' });
    expect((await memory.facts.list(user)).map((fact) => fact.value)).toEqual(['Bend']);
    expect((await memory.facts.history(user)).map((fact) => [fact.value, fact.supersededBy])).toEqual([
      ['Hood River', second.id],
      ['Bend', undefined],
    ]);
    await expect(memory.facts.put(user, { attribute: '', value: 'x' })).rejects.toSatisfy(isInvalid);
    await memory.facts.retire(user, second.id);
    expect(await memory.facts.list(user)).toEqual([]);
  });

  it('corrects a fact with history kept, and lets one expire out of listings and contexts on the clock', async () => {
    let clock = Date.parse('2025-06-01T10:00:00.000Z');
    const memory = createMemory({
      store: new InMemoryStore(),
      now: () => clock,
      worker: { autoStart: false },
      knowledge: false,
      compaction: { settings: { triggerTokens: 100, keepRecentTokens: 20 } },
    });
    const node = { ...user, conversationId: 'node-7' };
    await memory.append(node, { role: 'user', content: 'hello again' });
    const likes = await memory.facts.put(user, { attribute: 'likes', value: 'pizza' });
    const corrected = await memory.facts.correct(user, likes.id, { value: 'pasta', text: 'I like pasta, not pizza' });
    expect(corrected).toMatchObject({
      attribute: 'likes',
      value: 'pasta',
      text: 'I like pasta, not pizza',
      extractor: 'api',
    });
    expect(
      (await memory.facts.history(user, { attribute: 'likes' })).map((fact) => [fact.value, fact.supersededBy]),
    ).toEqual([
      ['pizza', corrected.id],
      ['pasta', undefined],
    ]);
    await expect(memory.facts.correct(user, likes.id, { value: 'soup' })).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'conflict'),
    );
    await expect(memory.facts.correct({ userId: 'someone-else' }, corrected.id, { value: 'soup' })).rejects.toSatisfy(
      (error: unknown) => isMemoryError(error, 'not_found'),
    );
    await expect(memory.facts.correct(user, corrected.id, { value: ' ' })).rejects.toSatisfy(isInvalid);

    const code = await memory.facts.put(user, {
      attribute: 'gate code',
      value: '4417',
      expiresAt: '2025-06-08T00:00:00+02:00',
    });
    expect(code.expiresAt).toBe('2025-06-07T22:00:00.000Z');
    const factsBlock = async () =>
      (await memory.buildContext(node, { maxTokens: 600, policy: 'hybrid', query: 'gate code?' })).report.parts
        .find((part) => part.kind === 'facts')
        ?.items?.map((item) => item.id) ?? [];
    // The context is built as of the conversation's start here (no compaction): facts put later wait for one.
    await memory.append(
      node,
      Array.from(
        { length: 40 },
        (_, index) =>
          ({
            role: index % 2 === 0 ? 'user' : 'assistant',
            content: `filler turn ${index} about nothing much at all`,
          }) as const,
      ),
    );
    await memory.compact(node);
    expect(await factsBlock()).toEqual(expect.arrayContaining([code.id, corrected.id]));
    clock = Date.parse('2025-06-07T22:00:00.000Z');
    expect((await memory.facts.list(user)).map((fact) => fact.value)).toEqual(['pasta']);
    expect(await factsBlock()).toEqual([corrected.id]);
    expect((await memory.facts.history(user, { attribute: 'gate_code' }))[0]).toMatchObject({
      value: '4417',
      expiresAt: '2025-06-07T22:00:00.000Z',
    });
    expect((await memory.facts.list(user, { asOf: '2025-06-05T00:00:00.000Z' })).map((fact) => fact.value)).toEqual([
      'pasta',
      '4417',
    ]);

    const kept = await memory.facts.expire(user, code.id, null);
    expect(kept.expiresAt).toBeUndefined();
    expect((await memory.facts.list(user)).map((fact) => fact.value)).toEqual(['pasta', '4417']);
    await expect(memory.facts.expire(user, code.id, 'next tuesday')).rejects.toSatisfy(isInvalid);
  });
});

describe('createMemory and the usage ledger of a context build', () => {
  it('answers before the ledger write ends; a usage read waits for it; a failed one is reported', async () => {
    const store = new InMemoryStore();
    const insertUsage = store.insertUsage.bind(store);
    let release: () => void = () => undefined;
    let fail = false;
    store.insertUsage = async (...args: Parameters<typeof store.insertUsage>) => {
      // A write that waits (a lock held by another process) until the test lets it go.
      await new Promise<void>((resolve) => (release = resolve));
      if (fail) throw new Error('the disk holding the database is full');
      return insertUsage(...args);
    };
    const failures: unknown[] = [];
    const memory = createMemory({
      store,
      onDeferredWriteError: (error) => failures.push(error),
      worker: { autoStart: false },
    });
    await memory.append(scope, { role: 'user', content: 'battery at 71 percent' });

    const built = await memory.buildContext(scope, { maxTokens: 200 });
    expect(built.report.sentTokens).toBeGreaterThan(0);
    let usageRead = false;
    const usage = memory.listUsage(scope).then((page) => ((usageRead = true), page));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(usageRead).toBe(false);
    release();
    expect((await usage).items.map((entry) => entry.kind)).toEqual(['context']);

    fail = true;
    await memory.buildContext(scope, { maxTokens: 200 });
    release();
    await memory.close();
    expect(failures.map((error) => (error as Error).message)).toEqual(['the disk holding the database is full']);
  });
});

import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import { InMemoryStore } from '../store/in-memory-store.js';
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
    const batch = [{ role: 'user', content: 'fine' }, { role: 'robot', content: 'bad' }];
    await expect(memory.append(scope, batch as never)).rejects.toSatisfy(isInvalid);
    await expect(memory.append(scope, [])).rejects.toSatisfy(isInvalid);
    expect(await memory.listMessages(scope)).toEqual([]);
  });

  it('checks a tool result against the stored tail of the conversation', async () => {
    const memory = createMemory({ store: new InMemoryStore() });
    await memory.append(scope, [
      { role: 'user', content: 'battery?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'battery', arguments: '{}' } }] },
    ]);
    await expect(memory.append(scope, { role: 'tool', toolCallId: 'other', content: '71%' })).rejects.toSatisfy(isInvalid);
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

import { describe, expect, it } from 'vitest';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { createMemory } from './create-memory.js';
import { eraseStepMessages } from './erase-messages.js';

describe('eraseMessages', () => {
  it('erases a large selection in steps of one conversation each, one audit entry a step, and sums the receipt', async () => {
    const store = new InMemoryStore();
    const memory = createMemory({ store, worker: { autoStart: false }, compaction: false, knowledge: false });
    const user = { userId: 'big' };
    const total = 2 * eraseStepMessages + 500;
    const at = (index: number) => new Date(Date.UTC(2025, 0, 1) + index * 1000).toISOString();
    await memory.append(
      { ...user, conversationId: 'a' },
      Array.from({ length: total }, (_, index) => ({
        role: 'user' as const,
        content: `line ${index}`,
        createdAt: at(index),
      })),
    );
    await memory.append({ ...user, conversationId: 'b' }, [
      { role: 'user', content: 'kept: said later', createdAt: at(total + 10) },
    ]);
    const calls: unknown[] = [];
    const erase = store.eraseMessages.bind(store);
    store.eraseMessages = (scope, selection, options) => {
      calls.push(selection);
      return erase(scope, selection, options);
    };

    const receipt = await memory.eraseMessages({ ...user, before: at(total) });

    expect(receipt).toMatchObject({ messages: total, conversations: 1 });
    expect(calls).toEqual([
      { conversationId: 'a', fromSeq: 1, toSeq: eraseStepMessages, before: at(total) },
      { conversationId: 'a', fromSeq: eraseStepMessages + 1, toSeq: 2 * eraseStepMessages, before: at(total) },
      { conversationId: 'a', fromSeq: 2 * eraseStepMessages + 1, toSeq: total, before: at(total) },
    ]);
    expect((await memory.erasures(user)).length).toBe(3);
    expect((await memory.erasures(user)).at(-1)?.id).toBe(receipt.auditId);
    expect((await memory.listMessages({ ...user, conversationId: 'a' })).length).toBe(0);
    expect((await memory.listMessages({ ...user, conversationId: 'b' })).map((message) => message.content)).toEqual([
      'kept: said later',
    ]);
    // A small selection stays one step.
    await memory.append({ ...user, conversationId: 'b' }, { role: 'user', content: 'another' });
    calls.length = 0;
    await memory.eraseMessages({ ...user, conversationId: 'b', fromSeq: 1, toSeq: 2 });
    expect(calls).toEqual([{ conversationId: 'b', fromSeq: 1, toSeq: 2 }]);
  });
});

import { describe, expect, it } from 'vitest';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { makeNewMessage, scopeA } from '../testing/conformance-fixtures.js';
import { embedBatchSize, embedConversation } from './embed-conversation.js';
import { HashedEmbedder } from '../recall/hashed-embedder.js';

describe('embedConversation', () => {
  it('embeds every message in batches and lets the event loop turn between them, so a timer fires during a long backlog', async () => {
    const store = new InMemoryStore();
    const count = 3 * embedBatchSize + 5;
    await store.appendMessages(
      scopeA,
      Array.from({ length: count }, (_, index) =>
        makeNewMessage(`relay ${index} reports battery ${index % 90} percent`),
      ),
    );
    // The in-memory store and the hashed embedder settle in microtasks only, as better-sqlite3 and an in-process model do.
    const embedder = new HashedEmbedder();
    const batchesBeforeTimer: number[] = [];
    let batches = 0;
    const counting = {
      model: embedder.model,
      dimensions: embedder.dimensions,
      embed: (texts: readonly string[]) => ((batches += 1), embedder.embed(texts)),
    };
    setTimeout(() => batchesBeforeTimer.push(batches), 0);

    expect(await embedConversation({ store, embedder: counting }, scopeA)).toBe(count);

    expect(batches).toBe(4);
    // Without a turn between batches the timer would only run after the last one.
    expect(batchesBeforeTimer).toEqual([1]);
    expect(await store.listUnembeddedMessages(scopeA, embedder.model, 10)).toEqual([]);
  });
});

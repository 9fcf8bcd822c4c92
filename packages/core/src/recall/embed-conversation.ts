import type { Scope } from '../messages/scope.js';
import type { Store } from '../store/store.js';
import type { Embedder } from './embedder.js';

/** Messages embedded per call to the embedder. */
export const embedBatchSize = 64;

/**
 * The `embed` job: gives every message of a conversation that has no vector of the embedder's model
 * one, in batches. Idempotent: a rerun (after a crash, or by a second worker) embeds only what is
 * still missing, and writing a vector twice replaces it. Returns how many messages it embedded.
 */
export async function embedConversation(dependencies: { store: Store; embedder: Embedder }, scope: Scope, signal?: AbortSignal): Promise<number> {
  const { store, embedder } = dependencies;
  const callOptions = signal === undefined ? {} : { signal };
  let embedded = 0;
  for (;;) {
    signal?.throwIfAborted();
    const pending = await store.listUnembeddedMessages(scope, embedder.model, embedBatchSize, callOptions);
    if (pending.length === 0) return embedded;
    const vectors = await embedder.embed(
      pending.map((message) => message.content),
      callOptions,
    );
    await store.upsertEmbeddings(scope, embedder.model, pending.map((message, index) => ({ seq: message.seq, vector: vectors[index]! })), callOptions);
    embedded += pending.length;
  }
}

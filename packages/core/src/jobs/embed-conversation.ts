import type { Message } from '../messages/message.js';
import type { Scope } from '../messages/scope.js';
import { nextTurn } from './next-turn.js';
import type { JobTimeSlice } from './time-slice.js';
import type { CallOptions, Store } from '../store/store.js';
import type { Embedder } from '../recall/embedder.js';

/** Messages embedded per call to the embedder. */
export const embedBatchSize = 64;

// Most characters of the previous message an embedding text carries: enough for a question or a remark,
// bounded so that a long tool result does not drown the message itself.
const maxContextChars = 500;

/**
 * The text a message is embedded as: the message before it (its context, cut to 500 characters), then
 * the message, each as `name: content` when the speaker has a name. A reply such as "Yes, last summer!"
 * is then found by what it answers, and a question naming a speaker finds what that speaker said
 * (measured on LoCoMo's turn-level evidence ranking: frac@10 from 58 to 69 against embedding the bare
 * text, see `packages/cli/src/bench/README.md`).
 */
export function embeddingText(message: Message, previous?: Message): string {
  const line = (item: Message, content: string) => (item.name === undefined ? content : `${item.name}: ${content}`);
  if (previous === undefined) return line(message, message.content);
  const context =
    previous.content.length > maxContextChars ? `${previous.content.slice(0, maxContextChars)}…` : previous.content;
  return `${line(previous, context)}\n${line(message, message.content)}`;
}

/**
 * The `embed` job: gives every message of a conversation that has no vector of the embedder's model
 * one (of its {@link embeddingText}), in batches. Idempotent: a rerun (after a crash, or by a second
 * worker) embeds only what is still missing, and writing a vector twice replaces it. With a job's
 * `slice`, a batch that would not end before the attempt's deadline is not started (the job queues the
 * rest). `batchSize` messages go to the embedder at a time (default {@link embedBatchSize}). With
 * `wanted`, asked before each batch, it stops (done, nothing queued) once that says no: the refine job
 * stops where a conversation has become a chat it does not refine. Returns how many messages it embedded.
 */
export async function embedConversation(
  dependencies: { store: Store; embedder: Embedder },
  scope: Scope,
  signal?: AbortSignal,
  slice?: JobTimeSlice,
  batchSize = embedBatchSize,
  wanted?: () => Promise<boolean>,
): Promise<number> {
  const { store, embedder } = dependencies;
  const callOptions = signal === undefined ? {} : { signal };
  let embedded = 0;
  for (;;) {
    signal?.throwIfAborted();
    const pending = await store.listUnembeddedMessages(scope, embedder.model, batchSize, callOptions);
    if (pending.length === 0) return embedded;
    if (slice !== undefined && !slice.roomForRound()) return embedded;
    if (wanted !== undefined && !(await wanted())) return embedded;
    const previous = await previousMessages(store, scope, pending, callOptions);
    const vectors = await embedder.embed(
      pending.map((message, index) => embeddingText(message, previous[index])),
      callOptions,
    );
    await store.upsertEmbeddings(
      scope,
      embedder.model,
      pending.map((message, index) => ({ seq: message.seq, vector: vectors[index]! })),
      callOptions,
    );
    embedded += pending.length;
    // An in-process model and a synchronous store settle in microtasks: a turn of the event loop per batch
    // lets timers, signals and sockets in (a server's requests, the attempt deadline) during a long backlog.
    await nextTurn();
  }
}

/** The message before each of `messages` (ascending seqs): from the batch itself, or read from the store. */
async function previousMessages(
  store: Store,
  scope: Scope,
  messages: readonly Message[],
  callOptions: { signal?: AbortSignal },
): Promise<(Message | undefined)[]> {
  const bySeq = new Map(messages.map((message) => [message.seq, message]));
  return Promise.all(
    messages.map(async (message) => {
      if (message.seq <= 1) return undefined;
      const inBatch = bySeq.get(message.seq - 1);
      if (inBatch !== undefined) return inBatch;
      const [before] = await store.listMessages(
        scope,
        { afterSeq: message.seq - 2, beforeSeq: message.seq },
        callOptions,
      );
      return before?.seq === message.seq - 1 ? before : undefined;
    }),
  );
}

/**
 * Embeds just-appended messages (ascending seqs, one conversation) with an in-thread embedder and writes
 * their vectors, so they are searchable as soon as the append returns. Returns `false`, having written
 * nothing, when the embedder has no `embedSync` or the embedding or the write fails: the caller then
 * queues the `embed` job, which catches up (a failure here never fails the append, whose messages are stored).
 */
export async function embedAppended(
  dependencies: { store: Store; embedder: Embedder },
  scope: Scope,
  appended: readonly Message[],
  callOptions?: CallOptions,
): Promise<boolean> {
  const { store, embedder } = dependencies;
  if (embedder.embedSync === undefined || appended.length === 0) return embedder.embedSync !== undefined;
  try {
    const previous = await previousMessages(store, scope, appended, callOptions ?? {});
    const vectors = embedder.embedSync(appended.map((message, index) => embeddingText(message, previous[index])));
    await store.upsertEmbeddings(
      scope,
      embedder.model,
      appended.map((message, index) => ({ seq: message.seq, vector: vectors[index]! })),
      callOptions,
    );
    return true;
  } catch {
    // The embed job retries with backoff and reports its failures; the append itself has succeeded.
    return false;
  }
}

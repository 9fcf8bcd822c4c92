import type { Message, Store } from '@mnemo/core';
import { postJson } from './served-mnemo.js';

// Writers that append one message per request with an Idempotency-Key, remember which appends were
// acknowledged (201 with a seq) and which were sent without an answer, and retry the latter with the
// same key: the client side of "every acknowledged message stored exactly once".

/** One message a writer sends: unique content and key. */
export interface PlannedMessage {
  readonly writer: number;
  readonly index: number;
  readonly conversationId: string;
  readonly key: string;
  readonly content: string;
}

/**
 * How writers treat a 503: by default it is unexpected (the run fails); with `retryUnavailable` the writer
 * waits the answer's `Retry-After` (at most `maxWaitMs`) and sends the same message with the same key again,
 * as a client of a store that is restarting does.
 */
export interface WriterOptions {
  readonly writers: number;
  readonly conversations: number;
  readonly prefix: string;
  readonly retryUnavailable?: { readonly maxWaitMs: number };
  /** `seed`: odd writers add through `POST /v1/memory/add` with the header (the seed API's key); default every writer uses the resource API. */
  readonly api?: 'resource' | 'mixed';
}

/** What the writers sent and what the servers answered, across every crash. */
export class AcknowledgedWriters {
  readonly #options: WriterOptions;
  readonly #writerCount: number;
  readonly #conversationCount: number;
  readonly #next: number[];
  readonly #pending: (PlannedMessage | undefined)[];
  /** key → the seq the server acknowledged. */
  readonly acknowledged = new Map<string, number>();
  /** key → message, for everything ever sent. */
  readonly sent = new Map<string, PlannedMessage>();
  /** Answers that were neither 201 nor a dropped connection (each one a failure of the run). */
  readonly unexpected: { key: string; status: number; body: unknown }[] = [];
  /** Acknowledgements of a retried key whose seq differed from the first one (must stay empty). */
  readonly resequenced: { key: string; first: number; again: number }[] = [];
  /** Appends sent again with their key after a crash. */
  retried = 0;
  /** 503 answers (with `retryUnavailable`), and those of them without a `Retry-After` header. */
  unavailable = 0;
  unavailableWithoutRetryAfter = 0;
  /** Connections refused or dropped while `retryUnavailable` kept the writer going. */
  dropped = 0;
  /** `performance.now()` of every acknowledgement, in order. */
  readonly acknowledgedAt: number[] = [];

  constructor(options: WriterOptions) {
    this.#options = options;
    this.#writerCount = options.writers;
    this.#conversationCount = options.conversations;
    this.#next = Array.from({ length: options.writers }, () => 0);
    this.#pending = Array.from({ length: options.writers }, () => undefined);
    this.prefix = options.prefix;
  }

  readonly prefix: string;

  /** The conversation ids the writers write to. */
  get conversationIds(): string[] {
    return Array.from({ length: this.#conversationCount }, (_, index) => `${this.prefix}-${index}`);
  }

  /** Messages sent whose answer never arrived. */
  get unacknowledged(): PlannedMessage[] {
    return this.#pending.filter((message): message is PlannedMessage => message !== undefined);
  }

  /**
   * Runs every writer against `urls` (writer w uses urls[w mod n]) until `shouldStop()` or its connection
   * drops: first its unacknowledged message, with the same key, then new ones, one request at a time.
   */
  async run(urls: readonly string[], shouldStop: () => boolean): Promise<void> {
    await Promise.all(
      Array.from({ length: this.#writerCount }, (_, writer) =>
        this.#runWriter(writer, urls[writer % urls.length]!, shouldStop),
      ),
    );
  }

  async #runWriter(writer: number, url: string, shouldStop: () => boolean): Promise<void> {
    while (!shouldStop()) {
      const retry = this.#pending[writer];
      const message = retry ?? this.#plan(writer);
      if (retry !== undefined) this.retried += 1;
      this.#pending[writer] = message;
      this.sent.set(message.key, message);
      const seed = this.#options.api === 'mixed' && writer % 2 === 1;
      const answer = seed
        ? await postJson(
            `${url}/v1/memory/add`,
            { conversation_id: message.conversationId, role: 'user', content: message.content },
            { 'idempotency-key': message.key },
          )
        : await postJson(
            `${url}/v1/conversations/${message.conversationId}/messages`,
            { messages: [{ role: 'user', content: message.content }] },
            { 'idempotency-key': message.key },
          );
      const retrying = this.#options.retryUnavailable;
      if (retrying !== undefined && (answer.status === 503 || answer.status === 0)) {
        if (answer.status === 0) this.dropped += 1;
        else {
          this.unavailable += 1;
          if (answer.headers?.get('retry-after') === null) this.unavailableWithoutRetryAfter += 1;
        }
        const retryAfterMs = Number(answer.headers?.get('retry-after') ?? 1) * 1000;
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(retrying.maxWaitMs, Number.isFinite(retryAfterMs) ? retryAfterMs : 1000)),
        );
        continue;
      }
      if (answer.status === 0) return;
      if (answer.status !== (seed ? 200 : 201)) {
        this.unexpected.push({ key: message.key, status: answer.status, body: answer.body });
        return;
      }
      const seq = seed
        ? (answer.body as { seq: number }).seq
        : (answer.body as { messages: { seq: number }[] }).messages[0]!.seq;
      this.acknowledgedAt.push(performance.now());
      const first = this.acknowledged.get(message.key);
      if (first !== undefined && first !== seq) this.resequenced.push({ key: message.key, first, again: seq });
      this.acknowledged.set(message.key, seq);
      this.#pending[writer] = undefined;
    }
  }

  /**
   * Sends every unacknowledged message again with its key until none is left (one pass suffices on a
   * healthy server, three at most), as a client does that was answered 503 or lost its connection just
   * before it stopped: what was sent and never answered is then stored once or refused for good.
   */
  async settle(urls: readonly string[]): Promise<void> {
    let passes = 0;
    while (this.unacknowledged.length > 0 && passes < 3) {
      passes += 1;
      const before = new Set(this.unacknowledged.map((message) => message.key));
      await this.run(
        urls,
        () => this.unacknowledged.every((message) => !before.has(message.key)) || this.unexpected.length > 0,
      );
    }
  }

  #plan(writer: number): PlannedMessage {
    const index = this.#next[writer]!;
    this.#next[writer] = index + 1;
    const conversationId = `${this.prefix}-${writer % this.#conversationCount}`;
    const key = `${this.prefix}-w${writer}-m${index}`;
    return {
      writer,
      index,
      conversationId,
      key,
      content: `${key}: node ${writer} reports ${index % 9} hops to the ridge relay and battery ${40 + (index % 60)} percent.`,
    };
  }

  /**
   * Compares the store with what was sent and acknowledged; `stored` maps each conversation id to its
   * messages. Every count but `stored` must be zero for the run to pass.
   */
  audit(stored: ReadonlyMap<string, readonly Message[]>): WriterAudit {
    const byKey = new Map<string, (Message & { conversationId: string })[]>();
    let gaps = 0;
    let outOfOrder = 0;
    let storedCount = 0;
    for (const [conversationId, messages] of stored) {
      storedCount += messages.length;
      messages.forEach((message, index) => {
        if (message.seq !== index + 1) gaps += 1;
        const key = sentKey(message);
        byKey.set(key, [...(byKey.get(key) ?? []), { ...message, conversationId }]);
      });
      // One writer sends one message at a time, so its messages are stored in the order it sent them.
      const lastIndex = new Map<number, number>();
      for (const message of messages) {
        const planned = this.sent.get(sentKey(message));
        if (planned === undefined) continue;
        if ((lastIndex.get(planned.writer) ?? -1) > planned.index) outOfOrder += 1;
        lastIndex.set(planned.writer, planned.index);
      }
    }
    let lost = 0;
    let duplicated = 0;
    let moved = 0;
    for (const [key, seq] of this.acknowledged) {
      const copies = byKey.get(key) ?? [];
      if (copies.length === 0) lost += 1;
      if (copies.length > 1) duplicated += copies.length - 1;
      const planned = this.sent.get(key)!;
      if (
        copies.length > 0 &&
        (copies[0]!.seq !== seq ||
          copies[0]!.content !== planned.content ||
          copies[0]!.conversationId !== planned.conversationId)
      )
        moved += 1;
    }
    const neverSent = [...byKey.keys()].filter((key) => !this.sent.has(key)).length;
    return { stored: storedCount, lost, duplicated, moved, gaps, outOfOrder, neverSent };
  }
}

/** The audit of a run that kept every acknowledged message exactly once, where it was acknowledged: `stored` messages, no problem. */
export function nothingLost(stored: number): WriterAudit {
  return { stored, lost: 0, duplicated: 0, moved: 0, gaps: 0, outOfOrder: 0, neverSent: 0 };
}

/** The Idempotency-Key a stored message was sent with: the server keys message i of a request `<header>#i`. */
function sentKey(message: Message): string {
  return (message.idempotencyKey ?? '').replace(/#0$/, '');
}

/** Counts of {@link AcknowledgedWriters.audit}. */
export interface WriterAudit {
  readonly stored: number;
  /** Acknowledged but not stored. */
  readonly lost: number;
  /** Extra copies of an acknowledged message. */
  readonly duplicated: number;
  /** Acknowledged messages stored at another seq, with other content or in another conversation. */
  readonly moved: number;
  /** Positions whose seq is not their place in the conversation (1, 2, 3, ...). */
  readonly gaps: number;
  /** A writer's message stored before one it sent earlier. */
  readonly outOfOrder: number;
  /** Stored messages with a key no writer sent. */
  readonly neverSent: number;
}

/** The stored messages of each conversation (of user = conversation, tenant `default`, as the writers write them), for {@link AcknowledgedWriters.audit}. */
export async function readWrittenConversations(
  store: Store,
  conversationIds: readonly string[],
): Promise<Map<string, Message[]>> {
  const stored = new Map<string, Message[]>();
  for (const conversationId of conversationIds)
    stored.set(
      conversationId,
      await store.listMessages({ tenantId: 'default', userId: conversationId, conversationId }),
    );
  return stored;
}

// Recall at scale for bench:scale: hashed-embedder vectors for a slice of the stored messages, then
// p50/p99 of keyword search, vector search and recall() (both, fused) for sampled users of the store.
import { type Embedder, type Scope, type Store, type UserScope } from '@mnemo/core';
import { keywordTerms, recall } from '@mnemo/core/internals';

/** Latency percentiles of one measured call, in milliseconds. */
export interface RecallLatency {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
}

/** What {@link measureRecall} reports. */
export interface RecallResult {
  readonly vectors: number;
  readonly embedSeconds: number;
  readonly vectorsPerSecond: number;
  /** `searchKeyword` for k = 50 (recall's default candidate count). */
  readonly keyword: RecallLatency;
  /** `searchVector` for k = 50. */
  readonly vector: RecallLatency;
  /** `recall()`: both searches, fused, k = 10. */
  readonly recall: RecallLatency;
  /** Mean hits a recall returned (k = 10 unless the user has fewer matches). */
  readonly meanHits: number;
  /** True when the time limit cut the timing short of samples × rounds queries. */
  readonly truncated: boolean;
}

/** Options of {@link measureRecall}. */
export interface MeasureRecallOptions {
  readonly store: Store;
  readonly embedder: Embedder;
  /** Conversations whose messages get vectors (every message of each). */
  readonly embedded: readonly Scope[];
  /** Queries per round, spread over the users of `embedded`. */
  readonly samples: number;
  readonly rounds: number;
  /** Stops timing after this many seconds (at least 5 queries): a store whose searches take seconds would otherwise hold the run for an hour. */
  readonly maxSeconds: number;
  /** Runs after the vectors are in, before timing (statistics, index maintenance); untimed. */
  readonly afterEmbed?: () => Promise<void>;
  readonly log: (line: string) => void;
}

const candidates = 50;

/**
 * Embeds every message of `embedded` (through `upsertEmbeddings`, as the embed job does), then times
 * keyword search, vector search and `recall()` for queries made of 5 consecutive words of a message of
 * the asking user, picked with a fixed seed so every store gets the same queries.
 */
export async function measureRecall(options: MeasureRecallOptions): Promise<RecallResult> {
  const { store, embedder } = options;
  const started = performance.now();
  let vectors = 0;
  const texts = new Map<string, string[]>();
  for (const scope of options.embedded) {
    const messages = await store.listMessages(scope);
    for (let offset = 0; offset < messages.length; offset += 100) {
      const batch = messages.slice(offset, offset + 100);
      const embedded = await embedder.embed(batch.map((message) => message.content));
      await store.upsertEmbeddings(
        scope,
        embedder.model,
        batch.map((message, index) => ({ seq: message.seq, vector: embedded[index]! })),
      );
      vectors += batch.length;
    }
    const owner = `${scope.tenantId}\u0000${scope.userId}`;
    texts.set(owner, [...(texts.get(owner) ?? []), ...messages.map((message) => message.content)]);
    if (vectors % 20_000 < messages.length) options.log(`  ${vectors.toLocaleString('en-US')} vectors`);
  }
  const embedSeconds = (performance.now() - started) / 1000;
  await options.afterEmbed?.();

  const random = seededRandom(7);
  const users = [...texts.keys()];
  const queries = Array.from({ length: options.samples }, (_, index) => {
    const owner = users[index % users.length]!;
    const [tenantId, userId] = owner.split('\u0000') as [string, string];
    const pool = texts.get(owner)!;
    const words = pool[Math.floor(random() * pool.length)]!.split(/\s+/);
    const start = Math.floor(random() * Math.max(1, words.length - 5));
    return { user: { tenantId, userId } satisfies UserScope, text: words.slice(start, start + 5).join(' ') };
  });
  const [keyword, vector, fused] = [[], [], []] as number[][];
  let hits = 0;
  let truncated = false;
  const deadline = performance.now() + options.maxSeconds * 1000;
  // One untimed pass first: JIT warm-up and cold caches belong to no percentile.
  for (const query of queries.slice(0, 5)) await recall({ store, embedder }, query.user, query.text, { k: 10 });
  timing: for (let round = 0; round < options.rounds; round += 1) {
    for (const query of queries) {
      if (fused!.length >= 5 && performance.now() > deadline) {
        truncated = true;
        break timing;
      }
      const [queryVector] = await embedder.embed([query.text]);
      let at = performance.now();
      await store.searchKeyword(query.user, keywordTerms(query.text), { k: candidates });
      keyword!.push(performance.now() - at);
      at = performance.now();
      await store.searchVector(query.user, embedder.model, queryVector!, { k: candidates });
      vector!.push(performance.now() - at);
      at = performance.now();
      hits += (await recall({ store, embedder }, query.user, query.text, { k: 10 })).length;
      fused!.push(performance.now() - at);
    }
  }
  return {
    vectors,
    embedSeconds: Math.round(embedSeconds * 10) / 10,
    vectorsPerSecond: Math.round(vectors / embedSeconds),
    keyword: latency(keyword!),
    vector: latency(vector!),
    recall: latency(fused!),
    meanHits: Math.round((hits / fused!.length) * 10) / 10,
    truncated,
  };
}

function latency(durations: number[]): RecallLatency {
  const sorted = [...durations].sort((a, b) => a - b);
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  const round = (value: number) => Math.round(value * 100) / 100;
  return { samples: sorted.length, p50Ms: round(at(0.5)), p99Ms: round(at(0.99)), meanMs: round(mean) };
}

// mulberry32: a small deterministic generator, so both stores are asked the same queries.
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

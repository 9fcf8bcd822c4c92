import type { Message } from '../messages/message.js';
import { cosineSimilarity } from '../recall/embedder.js';
import type { SearchHit, SearchOptions } from '../recall/search.js';
import { keywordBm25 } from '../recall/keyword-postings.js';

/** A message of a user with its conversation, as the in-memory searches scan them. */
export interface SearchableMessage {
  readonly conversationId: string;
  readonly message: Message;
}

// Okapi BM25 parameters, the stores' (see keyword-postings.ts).
const { k1, b } = keywordBm25;

/** Light English stemming (plural and -ing/-ed endings), so the in-memory store matches roughly like FTS stemmers do. */
export function stemTerm(word: string): string {
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('es')) return word.slice(0, -2);
  if (word.length > 2 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

function tokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map(stemTerm);
}

/** Keeps the messages a search's filters allow. */
export function filterSearchable(messages: readonly SearchableMessage[], options: SearchOptions): SearchableMessage[] {
  return messages.filter(
    ({ conversationId, message }) =>
      (options.conversationIds === undefined || options.conversationIds.includes(conversationId)) &&
      (options.since === undefined || message.createdAt >= options.since) &&
      (options.until === undefined || message.createdAt < options.until),
  );
}

/** BM25 over the given messages (the corpus is the user's messages after filtering), best first, ties newest first. */
export function bm25Search(corpus: readonly SearchableMessage[], terms: readonly string[], k: number): SearchHit[] {
  const queryTerms = [...new Set(terms.map(stemTerm))];
  const documents = corpus.map((item) => ({ item, words: tokens(item.message.content) }));
  const averageLength =
    documents.reduce((sum, document) => sum + document.words.length, 0) / Math.max(1, documents.length);
  const documentFrequency = new Map(
    queryTerms.map((term) => [term, documents.filter((document) => document.words.includes(term)).length]),
  );
  const hits: SearchHit[] = [];
  for (const { item, words } of documents) {
    let score = 0;
    for (const term of queryTerms) {
      const frequency = words.filter((word) => word === term).length;
      if (frequency === 0) continue;
      const df = documentFrequency.get(term)!;
      const idf = Math.log(1 + (documents.length - df + 0.5) / (df + 0.5));
      score += (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * words.length) / averageLength));
    }
    if (score > 0) hits.push({ ...item, score });
  }
  return hits.sort((x, y) => y.score - x.score || newestFirst(x, y)).slice(0, k);
}

/** Cosine nearest neighbours among the messages that have a vector, best first. */
export function vectorSearch(
  corpus: readonly SearchableMessage[],
  vectorOf: (item: SearchableMessage) => Float32Array | undefined,
  query: Float32Array,
  k: number,
): SearchHit[] {
  const hits: SearchHit[] = [];
  for (const item of corpus) {
    const vector = vectorOf(item);
    if (vector !== undefined) hits.push({ ...item, score: cosineSimilarity(query, vector) });
  }
  return hits.sort((x, y) => y.score - x.score || newestFirst(x, y)).slice(0, k);
}

function newestFirst(x: SearchHit, y: SearchHit): number {
  return x.message.createdAt < y.message.createdAt
    ? 1
    : x.message.createdAt > y.message.createdAt
      ? -1
      : y.message.seq - x.message.seq;
}

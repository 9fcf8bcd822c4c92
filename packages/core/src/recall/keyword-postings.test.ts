import { describe, expect, it } from 'vitest';
import { KeywordPostings, KeywordRanker, wordFrequencies } from './keyword-postings.js';

function postingsOf(
  messages: readonly { key: number; conversation: string; at: number; words: string }[],
): KeywordPostings {
  const postings = new KeywordPostings();
  for (const { key, conversation, at, words } of messages) {
    const list = words.split(' ').filter((word) => word.length > 0);
    postings.add(key, conversation, at, wordFrequencies(list), list.length);
  }
  return postings;
}

describe('keyword postings and their BM25 ranking', () => {
  it('breaks equal scores by time, then by key, newest first, and cuts the top k exactly there', () => {
    // Keys out of time order (a conversation imported later with older messages).
    const postings = postingsOf([
      { key: 1, conversation: 'a', at: 300, words: 'relay x' },
      { key: 2, conversation: 'a', at: 100, words: 'relay y' },
      { key: 3, conversation: 'b', at: 300, words: 'relay z' },
      { key: 4, conversation: 'b', at: 200, words: 'relay w' },
    ]);
    const ranker = new KeywordRanker();
    expect(ranker.rank(postings, [['relay']], 10, {}).map((hit) => hit.key)).toEqual([3, 1, 4, 2]);
    expect(ranker.rank(postings, [['relay']], 2, {}).map((hit) => hit.key)).toEqual([3, 1]);
    expect(ranker.rank(postings, [['relay']], 10, { conversationIds: ['a'] }).map((hit) => hit.key)).toEqual([1, 2]);
    expect(ranker.rank(postings, [['relay']], 10, { since: 150, until: 300 }).map((hit) => hit.key)).toEqual([4]);
  });

  it("scores by Okapi BM25 over the user's messages, rounded to ten decimals, and reuses its buffers between searches", () => {
    const postings = postingsOf([
      { key: 1, conversation: 'a', at: 1, words: 'relay ridge ridge' },
      { key: 2, conversation: 'a', at: 2, words: 'battery' },
      { key: 3, conversation: 'a', at: 3, words: 'relay battery solar panel mast' },
    ]);
    const ranker = new KeywordRanker();
    const average = 9 / 3;
    const bm25 = (frequency: number, documents: number, length: number) =>
      Math.log(1 + (3 - documents + 0.5) / (documents + 0.5)) *
      ((frequency * 2.2) / (frequency + 1.2 * (0.25 + (0.75 * length) / average)));
    const hits = ranker.rank(postings, [['ridge'], ['relay']], 10, {});
    expect(hits.map((hit) => hit.key)).toEqual([1, 3]);
    expect(hits[0]!.score).toBe(Math.round((bm25(2, 1, 3) + bm25(1, 2, 3)) * 1e10) / 1e10);
    expect(hits[1]!.score).toBe(Math.round(bm25(1, 2, 5) * 1e10) / 1e10);
    // A second search does not see the first one's scores.
    expect(ranker.rank(postings, [['battery']], 10, {}).map((hit) => hit.key)).toEqual([2, 3]);
    expect(ranker.rank(postings, [['missing']], 10, {})).toEqual([]);
    expect(ranker.rank(new KeywordPostings(), [['relay']], 10, {})).toEqual([]);
  });

  it('matches a group of words only where a message holds all of them, at the smallest of their frequencies', () => {
    const postings = postingsOf([
      { key: 1, conversation: 'a', at: 1, words: 'i ve got it' },
      { key: 2, conversation: 'a', at: 2, words: 'i have' },
      { key: 3, conversation: 'a', at: 3, words: 've i i ve ve' },
    ]);
    expect(postings.matches(['i', 've'])?.size).toBe(2);
    expect([...postings.matches(['ve', 'i'])!.frequencies.subarray(0, 2)]).toEqual([1, 2]);
    expect(postings.matches(['i', 'nope'])).toBeUndefined();
    expect(new KeywordRanker().rank(postings, [['i', 've']], 10, {}).map((hit) => hit.key)).toEqual([3, 1]);
  });
});

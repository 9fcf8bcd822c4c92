import { describe, expect, it } from 'vitest';
import type { Message } from '../messages/message.js';
import { checkRecallTuning, rankRecallCandidates, type RecallCandidates } from './rank-recall-candidates.js';
import { recallTuning } from './recall.js';
import type { SearchHit } from './search.js';

function hit(seq: number, createdAt: string, score = 1): SearchHit {
  const message: Message = { id: `m${seq}`, seq, role: 'user', content: `message ${seq}`, name: undefined, toolCalls: undefined, toolCallId: undefined, createdAt, metadata: undefined, idempotencyKey: undefined, tokens: 3 };
  return { conversationId: 'c', message, score };
}

// Two sessions seven weeks apart: seqs 1–3 on 1 May, 10–12 on 20 June.
const may = (minute: number) => `2023-05-01T10:0${minute}:00.000Z`;
const june = (minute: number) => `2023-06-20T10:0${minute}:00.000Z`;
const candidates: RecallCandidates = {
  keyword: [hit(10, june(0)), hit(1, may(0)), hit(11, june(1)), hit(12, june(2)), hit(2, may(1)), hit(3, may(2))],
  vector: [],
  speakers: new Set(),
};
const seqs = (tuning: Partial<typeof recallTuning>, extra: Partial<RecallCandidates> = {}) =>
  rankRecallCandidates({ ...candidates, ...extra }, { ...recallTuning, neighbourShare: 0, ...tuning }, 6).map((entry) => entry.message.seq);

describe('rankRecallCandidates', () => {
  it('keeps the fused order with the defaults', () => {
    expect(seqs({})).toEqual([10, 1, 11, 12, 2, 3]);
  });

  it('lifts the candidates of an episode that is about the query as a whole with the episode share', () => {
    const ranked = rankRecallCandidates(candidates, { ...recallTuning, neighbourShare: 0, episodeShare: 0.5 }, 6);

    // June's three candidates support each other more than May's: its second and third hits pass May's first.
    expect(ranked.map((entry) => entry.message.seq)).toEqual([10, 11, 12, 1, 2, 3]);
    expect(ranked[0]!.explain.episode).toBeGreaterThan(0);
  });

  it('spreads the first hits over episodes with the episode diversity', () => {
    expect(seqs({ episodeShare: 0.5, episodeDiversity: 0.5 })).toEqual([10, 1, 11, 2, 12, 3]);
  });

  it('raises messages said in a period the query names with the time boost', () => {
    expect(seqs({ timeBoost: 1 }, { periods: [{ month: 5 }] })).toEqual([1, 2, 3, 10, 11, 12]);
    expect(seqs({ timeBoost: 1 })).toEqual([10, 1, 11, 12, 2, 3]);
  });

  it('refuses a tuning out of range', () => {
    expect(() => checkRecallTuning({ ...recallTuning, episodeDiversity: 2 })).toThrow(/tuning\.episodeDiversity must be a number from 0 to 1/);
  });
});

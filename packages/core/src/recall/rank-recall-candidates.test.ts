import { describe, expect, it } from 'vitest';
import type { Message } from '../messages/message.js';
import { checkRecallTuning, rankRecallCandidates, type RecallCandidates } from './rank-recall-candidates.js';
import { recallTuning } from './recall.js';
import type { SearchHit } from './search.js';

function hit(seq: number, createdAt: string, score = 1): SearchHit {
  const message: Message = {
    id: `m${seq}`,
    seq,
    role: 'user',
    content: `message m${seq}`,
    name: undefined,
    toolCalls: undefined,
    toolCallId: undefined,
    createdAt,
    metadata: undefined,
    idempotencyKey: undefined,
    tokens: 3,
  };
  return { conversationId: 'c', message, score };
}

function worded(seq: number, createdAt: string, content: string): SearchHit {
  const base = hit(seq, createdAt);
  return { ...base, message: { ...base.message, content } };
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
  rankRecallCandidates({ ...candidates, ...extra }, { ...recallTuning, neighbourShare: 0, ...tuning }, 6).map(
    (entry) => entry.message.seq,
  );

describe('rankRecallCandidates', () => {
  it('keeps the fused order with the defaults', () => {
    expect(seqs({})).toEqual([10, 1, 11, 12, 2, 3]);
  });

  it('decays older messages with a recency half-life (off by default) and lifts the sources of facts with the importance boost', () => {
    // May is 50 days before June: with a 10-day half-life a May hit counts 1/32, so every June hit passes it.
    expect(seqs({ recencyHalfLifeDays: 10 })).toEqual([10, 11, 12, 1, 2, 3]);
    const important = { important: new Set(['c\u00003']) };
    expect(seqs({ importanceBoost: 1 }, important)).toEqual([3, 10, 1, 11, 12, 2]);
    // The default ×1.5 lifts the sixth hit to second; without the boost it stays last.
    expect(seqs({}, important)).toEqual([10, 3, 1, 11, 12, 2]);
    expect(seqs({ importanceBoost: 0 }, important)).toEqual([10, 1, 11, 12, 2, 3]);
    expect(() => checkRecallTuning({ ...recallTuning, recencyHalfLifeDays: -1 })).toThrow(/recencyHalfLifeDays/);
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

  it('fuses the second-hop list by its weight, and ignores it at weight 0', () => {
    const secondHop = [hit(3, may(2)), hit(20, june(5))];
    expect(seqs({ secondHopWeight: 1 }, { secondHop })).toEqual([3, 10, 20, 1, 11, 12, 2]);
    expect(
      rankRecallCandidates(
        { ...candidates, secondHop },
        { ...recallTuning, neighbourShare: 0, secondHopWeight: 1 },
        7,
      )[0]!.explain.secondHopRank,
    ).toBe(1);
    expect(seqs({ secondHopWeight: 0 }, { secondHop }).slice(0, 6)).toEqual([10, 1, 11, 12, 2, 3]);
  });

  it('spreads the hits of a list question over episodes with the list diversity, and only those', () => {
    expect(seqs({ episodeShare: 0.5, listDiversity: 0.5 }, { list: true })).toEqual([10, 1, 11, 2, 12, 3]);
    expect(seqs({ episodeShare: 0.5, listDiversity: 0.5 })).toEqual([10, 11, 12, 1, 2, 3]);
  });

  it("raises the messages of an episode that holds more of the query's terms with the episode coverage", () => {
    const spread: RecallCandidates = {
      keyword: [worded(1, may(0), 'lake trip'), worded(10, june(0), 'lake'), worded(11, june(1), 'camping')],
      vector: [],
      speakers: new Set(),
      terms: ['lake', 'camping'],
    };
    const order = (episodeCoverage: number) =>
      rankRecallCandidates(
        spread,
        { ...recallTuning, rrfConstant: 3, neighbourShare: 0, episodeShare: 0, episodeCoverage, lengthPrior: 0 },
        3,
      ).map((entry) => entry.message.seq);
    expect(order(0)).toEqual([1, 10, 11]);
    // June holds both words between its turns, May one: June's first turn passes May's.
    expect(order(1)).toEqual([10, 1, 11]);
    expect(rankRecallCandidates(spread, { ...recallTuning, episodeCoverage: 1 }, 3)[0]!.explain.coverage).toBe(1);
  });

  it('raises the messages that say more with the length prior, on their own score only', () => {
    const said: RecallCandidates = {
      keyword: [
        worded(1, may(0), 'Wow, cool!'),
        worded(10, june(0), 'We camped by the lake, roasted marshmallows and told stories'),
        worded(11, june(1), 'Nice'),
      ],
      vector: [],
      speakers: new Set(),
    };
    const order = (lengthPrior: number) =>
      rankRecallCandidates(
        said,
        { ...recallTuning, rrfConstant: 10, neighbourShare: 0, episodeShare: 0, episodeCoverage: 0, lengthPrior },
        3,
      ).map((entry) => entry.message.seq);
    expect(order(0)).toEqual([1, 10, 11]);
    // Six content words against two: 1/12 × 6^0.5 passes 1/11 × 2^0.5.
    expect(order(0.5)).toEqual([10, 1, 11]);
    // The short turn beside the long one does not take the long one's prior through the neighbour share.
    const scored = rankRecallCandidates(
      said,
      { ...recallTuning, rrfConstant: 10, neighbourShare: 1, episodeShare: 0, episodeCoverage: 0, lengthPrior: 0.5 },
      3,
    );
    const byseq = new Map(scored.map((entry) => [entry.message.seq, entry.score]));
    expect(byseq.get(11)).toBeCloseTo(1 / 13 + 1 / 12, 10);
  });

  it("raises a list question's messages by the speaker it names with the list speaker boost, and only a list question's", () => {
    const by = (seq: number, createdAt: string, name: string) => ({
      ...hit(seq, createdAt),
      message: { ...hit(seq, createdAt).message, name },
    });
    const told: RecallCandidates = {
      keyword: [
        by(10, june(0), 'Caroline'),
        by(11, june(1), 'Melanie'),
        by(1, may(0), 'Caroline'),
        by(2, may(1), 'Melanie'),
      ],
      vector: [],
      speakers: new Set(['melanie']),
    };
    const order = (list: boolean, listSpeakerBoost: number) =>
      rankRecallCandidates(
        { ...told, list },
        {
          ...recallTuning,
          rrfConstant: 10,
          speakerBoost: 0,
          neighbourShare: 0.3,
          episodeShare: 0,
          episodeCoverage: 0,
          lengthPrior: 0,
          listSpeakerBoost,
        },
        4,
      ).map((entry) => entry.message.seq);
    expect(order(true, 0)).toEqual([10, 11, 1, 2]);
    expect(order(true, 1)).toEqual([11, 2, 10, 1]);
    expect(order(false, 1)).toEqual([10, 11, 1, 2]);
  });

  it('refuses a tuning out of range', () => {
    expect(() => checkRecallTuning({ ...recallTuning, episodeDiversity: 2 })).toThrow(
      /tuning\.episodeDiversity must be a number from 0 to 1/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import type { Message } from '../messages/message.js';
import { echoShares } from './exchange-roles.js';
import { rankRecallCandidates, type RecallCandidates } from './rank-recall-candidates.js';
import { recallTuning } from './recall.js';
import type { SearchHit } from './search.js';

function said(seq: number, role: 'user' | 'assistant', content: string): SearchHit {
  const message: Message = {
    id: `m${seq}`,
    seq,
    role,
    content,
    name: undefined,
    toolCalls: undefined,
    toolCallId: undefined,
    createdAt: `2024-05-01T10:00:${String(seq).padStart(2, '0')}.000Z`,
    metadata: undefined,
    idempotencyKey: undefined,
    tokens: 3,
  };
  return { conversationId: 'c', message, score: 1 };
}

// The user states a fact (seq 1); the assistant's long reply (seq 2) repeats its words and ranks first in
// both lists; an unrelated reply (seq 4) follows a chatter line that is not a candidate.
const statement = said(1, 'user', 'For the billing service we settled on PostgreSQL as the database.');
const echo = said(
  2,
  'assistant',
  'So the billing service database is PostgreSQL. Billing database migrations, billing service schema, database tables and queries: here is a long plan.',
);
const other = said(4, 'assistant', 'The billing queries can use an index on the invoice tables.');
const candidates: RecallCandidates = {
  keyword: [echo, other, statement],
  vector: [echo, statement, other],
  speakers: new Set(),
  terms: ['database', 'billing', 'service'],
};
// The role constants in every chat: these replies are only 1.6 times as long as the user's turn.
const always = { ...recallTuning, assistantChatRatio: 0 };
const order = (tuning: Partial<typeof recallTuning>) =>
  rankRecallCandidates(candidates, { ...always, ...tuning }, 3).map((hit) => hit.message.seq);

describe('echoShares', () => {
  it("measures the share of a reply's query terms its user turn holds, and only for a reply after a user turn", () => {
    const masks = Uint32Array.from([0b111, 0b011, 0b111, 0b100]);
    const assistant = Uint8Array.from([0, 1, 1, 1]);
    const previous = Int32Array.from([-1, 0, 1, -1]);
    // Reply 1 echoes both of its terms; reply 2 follows a reply (no echo counted); reply 3 has no user turn.
    expect([...echoShares(masks, assistant, previous)]).toEqual([0, 1, 0, 0]);
  });
});

describe('rankRecallCandidates with roles', () => {
  it("ranks the echoing reply above the user turn it repeats without the exchange share (decision 0026's ranking)", () => {
    expect(order({ exchangeShare: 0, assistantPrior: 0, lengthPriorCap: 32 })[0]).toBe(2);
  });

  it("puts the user turn first with the defaults: the reply's echo counts for the turn it repeats", () => {
    const hits = rankRecallCandidates(candidates, recallTuning, 3);
    expect(hits[0]!.message.seq).toBe(1);
    expect(hits[0]!.explain.neighbour).toBeGreaterThan(0);
  });

  it("puts the user turn first when the reply's echo is discounted", () => {
    expect(order({ echoDiscount: 1, lengthPrior: 0 })[0]).toBe(1);
    const hits = rankRecallCandidates(candidates, { ...always, echoDiscount: 1 }, 3);
    expect(hits.find((hit) => hit.message.seq === 2)!.explain.own).toBeLessThan(1);
  });

  it("credits the user turn with its reply's score through the exchange share", () => {
    const [first] = rankRecallCandidates(candidates, { ...recallTuning, exchangeShare: 1, assistantPrior: 0.5 }, 3);
    expect(first!.message.seq).toBe(1);
    expect(first!.explain.neighbour).toBeGreaterThan(0);
    // A reply that echoes nothing of its turn lends it nothing: the unrelated reply's turn is not a candidate.
    const silent = rankRecallCandidates(
      { ...candidates, terms: [] },
      { ...recallTuning, neighbourShare: 0, exchangeShare: 1 },
      3,
    );
    expect(silent.find((hit) => hit.message.seq === 1)!.explain.neighbour).toBeUndefined();
  });

  it('stops favouring length past the cap', () => {
    const long = rankRecallCandidates(candidates, { ...always, assistantPrior: 0, lengthPriorCap: 32 }, 3).find(
      (hit) => hit.message.seq === 2,
    )!;
    const capped = rankRecallCandidates(candidates, { ...always, assistantPrior: 0, lengthPriorCap: 4 }, 3).find(
      (hit) => hit.message.seq === 2,
    )!;
    expect(capped.explain.own).toBeCloseTo(4 ** recallTuning.lengthPrior);
    expect(long.explain.own!).toBeGreaterThan(capped.explain.own!);
  });

  it('counts the role constants only among candidates whose replies are long enough (assistantChatRatio)', () => {
    // The replies here average 105 characters, the user turn 67: a ratio of about 1.6.
    const ownOfReply = (tuning: Partial<typeof recallTuning>) =>
      rankRecallCandidates(candidates, { ...recallTuning, ...tuning }, 3).find((hit) => hit.message.seq === 2)!.explain
        .own ?? 1;
    const plain = ownOfReply({ assistantPrior: 0, lengthPriorCap: 32 });
    const roles = { assistantPrior: 0.6, lengthPriorCap: 4 };
    expect(ownOfReply({ ...roles, assistantChatRatio: 2 })).toBeCloseTo(plain);
    expect(ownOfReply({ ...roles, assistantChatRatio: 1.5 })).toBeCloseTo(0.4 * 4 ** recallTuning.lengthPrior);
    expect(ownOfReply({ ...roles, assistantChatRatio: 0 })).toBeCloseTo(0.4 * 4 ** recallTuning.lengthPrior);
  });

  it('leaves chats without assistant replies (both people as users) unchanged', () => {
    const people: RecallCandidates = {
      ...candidates,
      keyword: candidates.keyword.map((hit) => ({ ...hit, message: { ...hit.message, role: 'user' as const } })),
      vector: [],
    };
    const tuned = rankRecallCandidates(
      people,
      { ...recallTuning, echoDiscount: 1, assistantPrior: 0.6, exchangeShare: 0.9 },
      3,
    ).map((hit) => hit.message.seq);
    expect(tuned).toEqual(rankRecallCandidates(people, recallTuning, 3).map((hit) => hit.message.seq));
  });
});

import { describe, expect, it } from 'vitest';
import type { RecallHit } from '../recall/recall-hit.js';
import { createGptTokenCounter } from '../tokens/gpt-token-counter.js';
import { recalledBlock } from './memory-blocks.js';

const counter = createGptTokenCounter();

function hit(seq: number, createdAt: string, content: string, score: number): RecallHit {
  return {
    conversationId: 'ridge',
    score,
    explain: { recency: 0, fused: score },
    message: {
      id: `m${seq}`,
      seq,
      role: 'user',
      name: 'Maren',
      content,
      createdAt,
      toolCalls: undefined,
      toolCallId: undefined,
      metadata: undefined,
      idempotencyKey: undefined,
      tokens: counter.countText(content),
    },
  };
}

describe('recalledBlock', () => {
  const hits = [
    hit(40, '2025-06-02T08:15:00.000Z', 'Switched the main relay to BEAR-CREEK.', 0.9),
    hit(3, '2025-05-28T10:00:00.000Z', 'My main relay is LARCH-RIDGE.', 0.8),
    hit(41, '2025-06-02T08:16:00.000Z', 'BEAR-CREEK runs on solar.', 0.7),
  ];

  it('writes the chosen hits in time order, the date once a day', () => {
    const block = recalledBlock(hits, counter, 500);

    expect(block.message?.content.split('\n')).toEqual([
      'Earlier messages that may matter for this turn (retrieved from the full history):',
      '[2025-05-28]',
      '10:00 Maren: My main relay is LARCH-RIDGE.',
      '[2025-06-02]',
      '08:15 Maren: Switched the main relay to BEAR-CREEK.',
      '08:16 Maren: BEAR-CREEK runs on solar.',
    ]);
    expect(block.items.map((item) => item.seq)).toEqual([40, 3, 41]);
    expect(block.tokens).toBe(counter.countMessage(block.message!));
  });

  it("gives the time of day only to snippets of the newest turn's day and the day before", () => {
    const block = recalledBlock(
      [...hits, hit(42, '2025-06-03T06:30:00.000Z', 'Heard BEAR-CREEK at dawn.', 0.6)],
      counter,
      500,
      '2025-06-03T07:00:00.000Z',
    );

    expect(block.message?.content.split('\n').slice(1)).toEqual([
      '[2025-05-28]',
      'Maren: My main relay is LARCH-RIDGE.',
      '[2025-06-02]',
      '08:15 Maren: Switched the main relay to BEAR-CREEK.',
      '08:16 Maren: BEAR-CREEK runs on solar.',
      '[2025-06-03]',
      '06:30 Maren: Heard BEAR-CREEK at dawn.',
    ]);
    // Three weeks on, a day's date is enough: the times go, and with them their tokens.
    const later = recalledBlock(hits, counter, 500, '2025-06-20T09:00:00.000Z');
    expect(later.message?.content).not.toMatch(/\d\d:\d\d/);
    expect(later.tokens).toBeLessThan(recalledBlock(hits, counter, 500).tokens);
    expect(later.tokens).toBe(counter.countMessage(later.message!));
  });

  it('chooses the best hits first when not all fit, and never goes over its room', () => {
    const room = recalledBlock(hits.slice(0, 1), counter, 500).tokens + 3;
    const block = recalledBlock(hits, counter, room);

    expect(block.items.map((item) => item.seq)).toEqual([40]);
    expect(block.excluded.map((item) => [item.seq, item.reason])).toEqual([
      [3, 'over_budget'],
      [41, 'over_budget'],
    ]);
    expect(block.tokens).toBeLessThanOrEqual(room);
    expect(recalledBlock(hits, counter, 10)).toMatchObject({ message: undefined, tokens: 0, items: [] });
  });
  it("cuts an assistant's long replies to their opening where recall found it answers at length, and only there", () => {
    const reply = (seq: number, content: string): RecallHit => {
      const base = hit(seq, '2025-06-02T08:16:00.000Z', content, 0.5);
      return { ...base, message: { ...base.message, role: 'assistant', name: undefined } };
    };
    const advice = Array.from({ length: 60 }, (_, index) => `Point ${index + 1}: keep the relay dry.`).join(' ');
    const longTurn = `My relay on the ridge is LARCH-RIDGE; ${'it has a solar panel and a 12 V battery, '.repeat(6)}and it is fine.`;
    const lineOf = (block: ReturnType<typeof recalledBlock>, role: 'Maren' | 'assistant') =>
      block.message!.content.split('\n').find((line) => line.startsWith(`${role}: `) || line.includes(` ${role}: `))!;

    const hits = [hit(1, '2025-06-02T08:15:00.000Z', longTurn, 0.9), reply(2, advice)];
    // An assistant that answers at length: its reply is commentary, its snippet short; the user's turn whole.
    const assistantChat = recalledBlock(hits, counter, 800, undefined, true);
    expect(counter.countText(longTurn)).toBeGreaterThan(48);
    expect(lineOf(assistantChat, 'Maren')).toContain(longTurn);
    const cut = lineOf(assistantChat, 'assistant').replace(/^.*assistant: /, '');
    expect(cut.endsWith('…')).toBe(true);
    expect(counter.countText(cut.slice(0, -1))).toBeLessThanOrEqual(48);

    // Anywhere else (LoCoMo, a bot with short replies) a reply keeps the long cut.
    const evenChat = recalledBlock(hits, counter, 800);
    const kept = lineOf(evenChat, 'assistant');
    expect(counter.countText(kept)).toBeGreaterThan(48);
  });
});

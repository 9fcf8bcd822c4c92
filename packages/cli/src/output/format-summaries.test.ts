import type { Message, Summary } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { formatExpandedSummary, formatSeqRange, formatSummaries } from './format-summaries.js';

const owner = { tenantId: 'default', userId: 'default', conversationId: 'node-7' };

function summary(id: string, fields: Partial<Summary> = {}): Summary {
  return {
    ...owner,
    id,
    level: 0,
    fromSeq: 1,
    toSeq: 10,
    content: 'user: relay is LARCH-RIDGE',
    tokens: 12,
    foldedSummaryIds: [],
    summarizer: 'extractive@1',
    inputTokens: 300,
    outputTokens: 12,
    createdAt: '2025-06-01T10:00:00.000Z',
    ...fields,
  };
}

function message(seq: number, content: string): Message {
  const createdAt = `2025-06-01T09:0${seq}:00.000Z`;
  const role = seq % 2 === 1 ? 'user' : 'assistant';
  return {
    id: `m${seq}`,
    seq,
    role,
    content,
    createdAt,
    tokens: 5,
    name: undefined,
    toolCalls: undefined,
    toolCallId: undefined,
    metadata: undefined,
    idempotencyKey: undefined,
  };
}

describe('formatSummaries', () => {
  it('lists each version with its range, cost and provenance, and explains a fallback below the table', () => {
    const text = formatSummaries([
      summary('s1'),
      summary('s2', {
        toSeq: 20,
        foldedSummaryIds: ['s1'],
        summarizer: 'extractive@1',
        fallbackReason: 'timeout after 30000 ms',
      }),
    ]);

    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+level\s+messages\s+tokens\s+summarizer\s+prompt \+ output\s+folded\s+created$/);
    expect(lines[1]).toMatch(/^s1\s+0\s+1–10\s+12\s+extractive@1\s+300 \+ 12\s+—\s+2025-06-01T10:00:00\.000Z$/);
    expect(lines[2]).toMatch(/^s2\s+0\s+1–20\s+12\s+extractive@1 \(fallback\)\s+300 \+ 12\s+s1\s+/);
    expect(lines[3]).toBe(
      'fallback: s2 was written by extractive@1 because the configured summarizer failed: timeout after 30000 ms',
    );
  });
});

describe('formatExpandedSummary', () => {
  it('shows the summary text, what it folded and every source message with seq, role and time', () => {
    const text = formatExpandedSummary({
      summary: summary('s2', { level: 1, toSeq: 2, content: 'line one\nline two', foldedSummaryIds: ['s1'] }),
      folded: [summary('s1', { toSeq: 2 })],
      messages: [message(1, 'I am Maren'), message(2, 'Noted.\nSecond line.')],
    });

    expect(text).toContain('level 1 · messages 1–2 · 12 tokens · extractive@1');
    expect(text).toContain('\n  line one\n  line two\n');
    expect(text).toContain('folds 1 summary:\n  s1  level 0  messages 1–2  12 tokens\n');
    expect(text).toContain(
      '2 source messages:\n  #1  user  2025-06-01T09:01:00.000Z\n    I am Maren\n  #2  assistant  2025-06-01T09:02:00.000Z\n    Noted.\n    Second line.\n',
    );
  });

  it('says so when a summary folds nothing', () => {
    expect(
      formatExpandedSummary({ summary: summary('s1', { toSeq: 1 }), folded: [], messages: [message(1, 'hi')] }),
    ).toContain('folds no earlier summary\n\n1 source message:');
  });
});

describe('formatSeqRange', () => {
  it('writes a single message as one number', () => {
    expect(formatSeqRange(1, 1)).toBe('1');
    expect(formatSeqRange(1, 30)).toBe('1–30');
  });
});

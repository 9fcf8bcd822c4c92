import type { BuiltContext, ContextPart } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import {
  allEvidenceAt,
  answerWordsPresent,
  anyEvidenceAt,
  contentWords,
  contextWordSet,
  evidenceFractionAt,
  evidencePresent,
  turnsPresent,
} from './locomo-score.js';

const ranking = ['D3:4', 'D1:7', 'D2:2', 'D5:1', 'D1:1', 'D4:4'];

describe('evidenceFractionAt', () => {
  it('is the share of evidence turns within the first k of the ranking', () => {
    expect(evidenceFractionAt(ranking, ['D1:7', 'D4:4'], 2)).toBe(0.5);
    expect(evidenceFractionAt(ranking, ['D1:7', 'D4:4'], 6)).toBe(1);
    expect(evidenceFractionAt(ranking, ['D9:9'], 6)).toBe(0);
  });

  it('counts a repeated evidence id once and is 0 without evidence', () => {
    expect(evidenceFractionAt(ranking, ['D3:4', 'D3:4', 'D9:9'], 5)).toBe(0.5);
    expect(evidenceFractionAt(ranking, [], 5)).toBe(0);
  });

  it('takes the whole ranking when k exceeds its length', () => {
    expect(evidenceFractionAt(['D1:1'], ['D1:1', 'D1:2'], 50)).toBe(0.5);
  });
});

describe('allEvidenceAt and anyEvidenceAt', () => {
  it('need every evidence turn, or at least one, within the top k', () => {
    expect(allEvidenceAt(ranking, ['D3:4', 'D2:2'], 3)).toBe(true);
    expect(allEvidenceAt(ranking, ['D3:4', 'D4:4'], 3)).toBe(false);
    expect(anyEvidenceAt(ranking, ['D3:4', 'D4:4'], 3)).toBe(true);
    expect(anyEvidenceAt(ranking, ['D4:4'], 3)).toBe(false);
  });

  it('are false without evidence', () => {
    expect(allEvidenceAt(ranking, [], 10)).toBe(false);
    expect(anyEvidenceAt(ranking, [], 10)).toBe(false);
  });
});

describe('contentWords', () => {
  it('lower-cases, strips accents and punctuation, drops stopwords and folds a plural s', () => {
    expect(contentWords('The Café sold 3 paintings, and a glass!')).toEqual(['cafe', 'sold', '3', 'painting', 'glass']);
  });

  it('keeps month names such as May, since dates are answers', () => {
    expect(contentWords('7 May 2023')).toEqual(['7', 'may', '2023']);
  });
});

describe('answerWordsPresent', () => {
  const context = new Set(contentWords('Ava adopted a beagle named Pixel in 2023'));

  it('is the share of the answer content words found in the context', () => {
    expect(answerWordsPresent('a beagle named Pixel', context)).toBe(1);
    expect(answerWordsPresent('beagle, poodle', context)).toBe(0.5);
    expect(answerWordsPresent('2022', context)).toBe(0);
  });

  it('is undefined when the answer has no content word', () => {
    expect(answerWordsPresent('the', context)).toBeUndefined();
  });
});

function contextOf(messages: BuiltContext['messages'], parts: ContextPart[]): BuiltContext {
  return {
    messages,
    report: {
      policy: 'hybrid',
      maxTokens: 1000,
      encoding: 'o200k_base',
      parts,
      dropped: [],
      truncated: [],
      excludedItems: [],
      requestOverheadTokens: 3,
      fullHistoryTokens: 500,
      sentTokens: 100,
      savedTokens: 400,
      savedPercent: 80,
      stable: { messageCount: 0, tokens: 0 },
    },
  };
}

describe('turnsPresent', () => {
  const turnsBySeq = new Map([
    [1, { diaId: 'D1:1', content: 'I adopted a beagle named Pixel.' }],
    [2, { diaId: 'D1:2', content: 'I repaired my sailboat at the marina on Saturday.' }],
    [3, { diaId: 'D1:3', content: 'Pottery is calming.' }],
    [4, { diaId: 'D1:4', content: 'We saw dolphins.' }],
  ]);

  it('counts recent turns and recalled snippets of the conversation whose whole text is in the context', () => {
    const context = contextOf(
      [
        { role: 'system', content: 'Earlier messages:\n[2023-05-08 13:56] Ava: I adopted a beagle named Pixel.' },
        { role: 'user', content: 'Pottery is calming.', name: 'Ava' },
        { role: 'assistant', content: 'We saw dolphins.', name: 'Ben' },
      ],
      [
        {
          kind: 'recalled',
          tokens: 20,
          messageCount: 1,
          items: [{ kind: 'recalled', id: 'm1', conversationId: 'c', seq: 1, tokens: 12 }],
        },
        { kind: 'recent', tokens: 20, messageCount: 2, seqRange: { from: 3, to: 4 } },
      ],
    );

    expect(turnsPresent(context, 'c', turnsBySeq)).toEqual(new Set(['D1:1', 'D1:3', 'D1:4']));
  });

  it('leaves out a snippet cut short, a recalled item of another conversation and a turn only echoed in the summary', () => {
    const context = contextOf(
      [
        { role: 'system', content: 'Summary: Ava said: Pottery is calming.' },
        {
          role: 'system',
          content:
            'Earlier messages:\n[2023-05-08 13:56] Ben: I repaired my sailboat…\n[x] Ava: I adopted a beagle named Pixel.',
        },
      ],
      [
        { kind: 'summary', tokens: 10, messageCount: 1, seqRange: { from: 1, to: 3 } },
        {
          kind: 'recalled',
          tokens: 20,
          messageCount: 1,
          items: [
            { kind: 'recalled', id: 'm2', conversationId: 'c', seq: 2, tokens: 12 },
            { kind: 'recalled', id: 'other', conversationId: 'other', seq: 1, tokens: 12 },
          ],
        },
      ],
    );

    expect(turnsPresent(context, 'c', turnsBySeq)).toEqual(new Set());
  });
});

describe('evidencePresent', () => {
  it('is the share of evidence turns present', () => {
    expect(evidencePresent(['D1:1', 'D1:2'], new Set(['D1:1']))).toBe(0.5);
    expect(evidencePresent(['D1:1'], new Set())).toBe(0);
  });
});

describe('contextWordSet', () => {
  it('holds the words of every message and the speaker names', () => {
    const words = contextWordSet(contextOf([{ role: 'user', content: 'Dolphins!', name: 'Ava' }], []));

    expect(words).toEqual(new Set(['ava', 'dolphin']));
  });
});

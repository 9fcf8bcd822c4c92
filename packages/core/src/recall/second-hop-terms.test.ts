import { describe, expect, it } from 'vitest';
import type { Message } from '../messages/message.js';
import { secondHopTerms } from './second-hop-terms.js';
import type { SearchHit } from './search.js';

function seed(content: string, name: string): SearchHit {
  const message = {
    id: content,
    seq: 1,
    role: 'user',
    content,
    name,
    createdAt: '2024-01-01T00:00:00.000Z',
    tokens: 1,
  } as Message;
  return { conversationId: 'c', message, score: 1 };
}

describe('secondHopTerms', () => {
  it('adds the words of the first hits that the query lacks, leaving out speaker names', () => {
    const terms = secondHopTerms(['move', 'from'], new Set(['caroline']), [
      seed('Caroline here: I moved from Sweden four years ago, Melanie', 'Caroline'),
    ]);
    expect(terms.slice(0, 2)).toEqual(['move', 'from']);
    expect(terms).toContain('sweden');
    expect(terms).toContain('melanie');
    expect(terms).not.toContain('caroline');
  });

  it('keeps the query terms alone when there are no first hits', () => {
    expect(secondHopTerms(['relay'], new Set(), [])).toEqual(['relay']);
  });
});

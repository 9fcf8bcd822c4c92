import { describe, expect, it } from 'vitest';
import { readStatements } from './read-statements.js';

const texts = (content: string) => readStatements(content).map((statement) => statement.text);

describe('readStatements', () => {
  it('splits sentences at end punctuation followed by space, not inside node ids, decimals or "Mt."', () => {
    expect(texts('I am Maren. this node is !a3f9c2d1, it reads 3.71 V! home is near Mt. Hood\nsecond line')).toEqual([
      'I am Maren.',
      'this node is !a3f9c2d1, it reads 3.71 V!',
      'home is near Mt. Hood',
      'second line',
    ]);
  });

  it('drops questions when they end with a question mark, start with a question word or an inverted auxiliary', () => {
    expect(
      texts("what's my relay? is my relay LARCH-RIDGE. where do I live. ¿Dónde vivo. my relay is LARCH-RIDGE."),
    ).toEqual(['my relay is LARCH-RIDGE.']);
  });

  it('drops hypotheticals when they say if, would, maybe or thinking of', () => {
    expect(
      texts('If I lived in Paris I would love it. Maybe I like jazz. thinking of a 5.8 dBi omni. I live in Bend.'),
    ).toEqual(['I live in Bend.']);
  });

  it('keeps the claim before a trailing condition or request clause, and still drops a sentence that is a condition', () => {
    expect(
      texts(
        'my license renewal is due 2026-03-15, remind me if it comes up. gate code is 4471, if you need it. if it rains, my plan is B.',
      ),
    ).toEqual(['my license renewal is due 2026-03-15', 'gate code is 4471']);
  });

  it('blanks quoted passages and what follows a reporting verb when matching, keeping the verbatim text', () => {
    const [quoted, reported] = readStatements(
      'He wrote "I live in Paris" on the card. my buddy Tomas says he lives in Bend.',
    );
    expect(quoted!.text).toBe('He wrote "I live in Paris" on the card.');
    expect(quoted!.match).not.toContain('Paris');
    expect(quoted!.match).toHaveLength(quoted!.text.length);
    expect(reported!.match).toContain('my buddy Tomas');
    expect(reported!.match).not.toContain('Bend');
  });
});

import { describe, expect, it } from 'vitest';
import { asksForList } from './list-questions.js';

describe('asksForList', () => {
  it('is true when the question asks for plural things, places over time or a count', () => {
    expect(asksForList('What activities does Melanie partake in?')).toBe(true);
    expect(asksForList('What books has Melanie read?')).toBe(true);
    expect(asksForList('What LGBTQ+ events has Caroline participated in?')).toBe(true);
    expect(asksForList('Where has Melanie camped?')).toBe(true);
    expect(asksForList('How many times has Jon been to Paris?')).toBe(true);
  });

  it('is false when the question asks for one thing', () => {
    expect(asksForList('What did Caroline research?')).toBe(false);
    expect(asksForList("What is Caroline's relationship status?")).toBe(false);
    expect(asksForList('When did Melanie paint a sunrise?')).toBe(false);
    expect(asksForList('What does Melanie do to destress?')).toBe(false);
  });
});

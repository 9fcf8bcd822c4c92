import { describe, expect, it } from 'vitest';
import { findQueryPeriods, withinPeriods } from './query-periods.js';

describe('findQueryPeriods', () => {
  it('reads days, months with and without a year, and years', () => {
    expect(findQueryPeriods('What painting did Melanie show on October 13, 2023?')).toEqual([
      { day: 13, month: 10, year: 2023 },
    ]);
    expect(findQueryPeriods('When did Melanie go camping in June?')).toEqual([{ month: 6 }]);
    expect(findQueryPeriods('What did they paint in July 2023?')).toEqual([{ month: 7, year: 2023 }]);
    expect(findQueryPeriods('How many times has Melanie gone to the beach in 2023?')).toEqual([{ year: 2023 }]);
  });

  it('finds nothing in a question without a date, and does not read "may" as a month', () => {
    expect(findQueryPeriods('May I ask what Caroline painted?')).toEqual([]);
    expect(findQueryPeriods('What did Caroline realize after her charity race?')).toEqual([]);
  });
});

describe('withinPeriods', () => {
  const at = (iso: string) => Date.parse(iso);

  it('matches a time in the period or within the slack after it', () => {
    expect(withinPeriods(at('2023-06-20T10:00:00Z'), [{ month: 6 }], 14)).toBe(true);
    expect(withinPeriods(at('2023-07-10T10:00:00Z'), [{ month: 6 }], 14)).toBe(true);
    expect(withinPeriods(at('2023-07-20T10:00:00Z'), [{ month: 6 }], 14)).toBe(false);
    expect(withinPeriods(at('2023-10-13T18:00:00Z'), [{ day: 13, month: 10, year: 2023 }], 0)).toBe(true);
    expect(withinPeriods(at('2022-10-13T18:00:00Z'), [{ day: 13, month: 10, year: 2023 }], 0)).toBe(false);
    expect(withinPeriods(at('2024-01-05T00:00:00Z'), [{ month: 12 }], 14)).toBe(true);
  });
});

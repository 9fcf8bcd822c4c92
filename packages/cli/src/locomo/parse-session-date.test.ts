import { describe, expect, it } from 'vitest';
import { parseSessionDate, slashOrderOf } from './parse-session-date.js';

const iso = (value: string | number, options = {}) => parseSessionDate(value, options)?.toISOString();

describe('parseSessionDate', () => {
  it("reads LoCoMo's 12-hour form as UTC", () => {
    expect(iso('1:56 pm on 8 May, 2023')).toBe('2023-05-08T13:56:00.000Z');
    expect(iso('12:09 am on 1 January, 2024')).toBe('2024-01-01T00:09:00.000Z');
    expect(iso('12:30 pm on 29 February, 2024')).toBe('2024-02-29T12:30:00.000Z');
  });

  it('reads ISO 8601 with and without time, seconds, fraction and zone', () => {
    expect(iso('2023-12-29')).toBe('2023-12-29T00:00:00.000Z');
    expect(iso('2023-12-29T22:42')).toBe('2023-12-29T22:42:00.000Z');
    expect(iso('2023-12-29T22:42:04.250Z')).toBe('2023-12-29T22:42:04.250Z');
    expect(iso('2023-12-29T22:42:04+02:00')).toBe('2023-12-29T20:42:04.000Z');
    expect(iso('2023-12-29T22:42:04-0500')).toBe('2023-12-30T03:42:04.000Z');
  });

  it('reads YYYY-MM-DD HH:MM, the dotted European form and Unix time', () => {
    expect(iso('2023-12-29 22:42')).toBe('2023-12-29T22:42:00.000Z');
    expect(iso('2023/12/29 22:42:04')).toBe('2023-12-29T22:42:04.000Z');
    expect(iso('29.12.2023, 22:42:04')).toBe('2023-12-29T22:42:04.000Z');
    expect(iso('29.12.2023 22:42')).toBe('2023-12-29T22:42:00.000Z');
    expect(iso('1.2.2024')).toBe('2024-02-01T00:00:00.000Z');
    expect(iso(1703889724)).toBe('2023-12-29T22:42:04.000Z');
    expect(iso('1703889724000')).toBe('2023-12-29T22:42:04.000Z');
  });

  it('reads textual dates with the time before or after, weekdays, ordinals and short months', () => {
    expect(iso('8 May 2023')).toBe('2023-05-08T00:00:00.000Z');
    expect(iso('May 8, 2023')).toBe('2023-05-08T00:00:00.000Z');
    expect(iso('Monday, 8 May 2023, 13:56')).toBe('2023-05-08T13:56:00.000Z');
    expect(iso('May 8th, 2023 at 1:56 PM')).toBe('2023-05-08T13:56:00.000Z');
    expect(iso('10:05 on 20 Jun 2023')).toBe('2023-06-20T10:05:00.000Z');
    expect(iso('Sept 3, 2023 9:00 a.m.')).toBe('2023-09-03T09:00:00.000Z');
  });

  it('reads a slash date by its day/month order, and only when that order is known or forced', () => {
    expect(iso('29/12/2023 22:42')).toBe('2023-12-29T22:42:00.000Z');
    expect(iso('12/29/2023, 10:42 pm')).toBe('2023-12-29T22:42:00.000Z');
    expect(iso('03/04/2024')).toBeUndefined();
    expect(iso('03/04/2024', { slashOrder: 'day-first' })).toBe('2024-04-03T00:00:00.000Z');
    expect(iso('03/04/2024', { slashOrder: 'month-first' })).toBe('2024-03-04T00:00:00.000Z');
    expect([slashOrderOf('29/12/2023'), slashOrderOf('12/29/2023'), slashOrderOf('03/04/2024')]).toEqual([
      'day-first',
      'month-first',
      undefined,
    ]);
  });

  it('returns undefined for text that is not a date, or an impossible one', () => {
    for (const text of [
      'yesterday',
      '',
      '1:56 pm on 31 June, 2023',
      '1:56 pm on 8 Mayday, 2023',
      '2023-02-30',
      '31.04.2023',
      '25:00 on 8 May 2023',
      '13:00 pm on 8 May 2023',
      'May 2023',
    ]) {
      expect(parseSessionDate(text), text).toBeUndefined();
    }
  });
});

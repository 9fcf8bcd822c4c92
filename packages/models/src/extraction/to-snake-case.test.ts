import { describe, expect, it } from 'vitest';
import { toSnakeCase } from './to-snake-case.js';

describe('toSnakeCase', () => {
  it('turns spaced, camel-cased, kebab-cased and punctuated keys into snake_case', () => {
    expect(toSnakeCase('Home Town')).toBe('home_town');
    expect(toSnakeCase('homeTown')).toBe('home_town');
    expect(toSnakeCase('  trip-date ')).toBe('trip_date');
    expect(toSnakeCase('works at:')).toBe('works_at');
    expect(toSnakeCase('sister__of')).toBe('sister_of');
    expect(toSnakeCase('uses_relay')).toBe('uses_relay');
  });

  it('keeps letters of other scripts and returns an empty string when nothing is left', () => {
    expect(toSnakeCase('Lieblings Stadt')).toBe('lieblings_stadt');
    expect(toSnakeCase('любимый цвет')).toBe('любимый_цвет');
    expect(toSnakeCase(' -- ')).toBe('');
  });
});

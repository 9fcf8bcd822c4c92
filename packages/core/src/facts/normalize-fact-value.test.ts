import { describe, expect, it } from 'vitest';
import { findDates } from './find-dates.js';
import { normalizeFactValue, toAttributeKey } from './normalize-fact-value.js';
import { isSingleValuedAttribute } from './single-valued-attributes.js';

describe('normalizeFactValue', () => {
  it('compares values without case, articles, possessives, edge punctuation and plural s', () => {
    expect(normalizeFactValue('Hood River.')).toBe(normalizeFactValue('hood river'));
    expect(normalizeFactValue('a 10000 mAh power bank')).toBe(normalizeFactValue('my 10000 mAh power bank'));
    expect(normalizeFactValue('cats')).toBe(normalizeFactValue('the cat'));
    expect(normalizeFactValue('el café')).toBe('café');
    expect(normalizeFactValue('Bend')).not.toBe(normalizeFactValue('Portland'));
  });

  it('folds spellings of the same date together when the value is a date', () => {
    expect(normalizeFactValue('June 21')).toBe('21 june');
    expect(normalizeFactValue('21st of June')).toBe('21 june');
    expect(normalizeFactValue('Jun 21, 2025')).toBe('21 june 2025');
    expect(normalizeFactValue('2025-06-21')).toBe('21 june 2025');
    expect(normalizeFactValue('June 14')).not.toBe(normalizeFactValue('June 21'));
  });
});

describe('toAttributeKey', () => {
  it('snake-cases words and folds synonyms when they name the same attribute', () => {
    expect(toAttributeKey('Home Town')).toBe('home_town');
    expect(toAttributeKey('hometown')).toBe('home_town');
    expect(toAttributeKey('call sign')).toBe('callsign');
    expect(toAttributeKey('favourite colour')).toBe('favorite_colour');
    expect(toAttributeKey('mom')).toBe('mother');
    expect(toAttributeKey('main relay')).toBe('main_relay');
    expect(toAttributeKey('!!')).toBe('');
  });
});

describe('findDates', () => {
  it('marks a date negated when "not" or "instead of" comes right before it', () => {
    const dates = findDates('moved to June 21, not June 14, instead of 3 July');
    expect(dates.map((date) => [date.value, date.normalized, date.negated])).toEqual([
      ['June 21', '21 june', false],
      ['June 14', '14 june', true],
      ['3 July', '3 july', true],
    ]);
  });

  it('ignores numbers that are not dates when no month is named', () => {
    expect(findDates('a 3000 mAh cell, 4 days, 65 km, the 21st')).toEqual([]);
  });
});

describe('isSingleValuedAttribute', () => {
  it('treats identity and *_date attributes as single-valued and tastes as multi-valued', () => {
    expect(['name', 'lives_in', 'callsign', 'node_id', 'trip_date', 'exam_date'].every(isSingleValuedAttribute)).toBe(
      true,
    );
    expect(['likes', 'dislikes', 'owns', 'prefers', 'buddy'].some(isSingleValuedAttribute)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { turnAsks } from './turn-asks.js';

describe('turnAsks', () => {
  it.each([
    'which relay did I name?',
    'wx?',
    'what relay am I on',
    'whats my relay',
    'is BEAR-CREEK up',
    'did i tell you my callsign',
    'How long ago was the trip',
    'How many months passed between Andrew adopting Buddy and Scout',
    'Nice. Where did we camp last summer',
    'remind me what the doctor said',
    'Please list my relays',
    'Do you remember the trail name',
    'Remember when we went camping',
    '¿Dónde está el nodo?',
    'dónde dejé la batería',
    'Est-ce que le relais marche',
    'wann war das letzte Update',
    '今天天气怎么样？',
  ])('asks: %s', (text) => {
    expect(turnAsks(text)).toBe(true);
  });

  it.each([
    'I switched my main relay to BEAR-CREEK',
    'thanks!',
    'ok',
    'How fun',
    'What a day!',
    'When I was younger, we moved a lot.',
    'I remember when I did my first play.',
    'They remind me why I love this.',
    'cuando llegue te aviso',
    'Wohnung ist fertig',
    '',
  ])('tells: %s', (text) => {
    expect(turnAsks(text)).toBe(false);
  });
});

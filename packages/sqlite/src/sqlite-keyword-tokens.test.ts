import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { keywordTokens } from './sqlite-keyword-tokens.js';

// Text of the kinds the index meets: chat English (inflections Porter folds), call signs and node ids
// with digits, times and numbers, Latin diacritics, other scripts, apostrophes and punctuation.
const texts = [
  "Hey Mel! Good to see you! How have you been? I've been running and hiking a lot lately.",
  'The generalization of organizations: relational, conditional, hopefulness, formality, electricity.',
  'Caroline went to the LGBTQ support group yesterday; she said it was really empowering.',
  "I'm Wren, callsign F8HPS. node is !748ca60a, a RAK4631. home is Argentiere",
  'snr -7.25 dB at 14:05, battery 3.9V, 1,000.50 km, the 1900s and 4000s, x86_64, e-mail',
  'Café naïve résumé Ångström façade coöperate Øresund Łódź Dvořák',
  'ΣΊΣΥΦΟΣ and Ελληνικά; Привет, как дела? München',
  '東京タワー に 行きました 2023年',
  'skies flying happily agreed feed plastered motoring conflated troubling sized hopping tanned falling hissing fizzed failing filing',
  'caresses ponies ties caress cats feed agreed disabled matting mating meeting milling messing meetings',
  'triplicate formative formalize electriciti electrical hopeful goodness revival allowance inference airliner gyroscopic',
  'adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize',
  'probate rate cease controll roll',
  'yyy y ay oy by sky',
];

/** The words SQLite's FTS5 with the tokenizer the index replaced (`porter unicode61 remove_diacritics 2`) gives each text. */
function fts5Words(input: readonly string[]): string[][] {
  const database = new Database(':memory:');
  try {
    database.exec(`CREATE VIRTUAL TABLE t USING fts5(content, tokenize='porter unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);`);
    const insert = database.prepare('INSERT INTO t (rowid, content) VALUES (?, ?)');
    input.forEach((text, index) => insert.run(index + 1, text));
    const words: string[][] = input.map(() => []);
    for (const [term, doc, offset] of database.prepare('SELECT term, doc, offset FROM v').raw(true).all() as [
      string,
      number,
      number,
    ][]) {
      words[doc - 1]![offset] = term;
    }
    return words;
  } finally {
    database.close();
  }
}

describe('keyword index words', () => {
  it('splits, folds and stems text as FTS5 porter unicode61 did, word for word', () => {
    const expected = fts5Words(texts);
    texts.forEach((text, index) => expect(keywordTokens(text), text).toEqual(expected[index]));
  });

  it('keeps repeats in order, folds query words the same way as messages, and differs from FTS5 only at emoji and non-ASCII stems', () => {
    expect(keywordTokens('Running, runs, RAN; running!')).toEqual(['run', 'run', 'ran', 'run']);
    expect(keywordTokens('résumé')).toEqual(keywordTokens('RESUME'));
    expect(keywordTokens('σίσυφος')).toEqual(keywordTokens('ΣΊΣΥΦΟΣ'));
    // FTS5 counts code points newer than its Unicode tables (🧘, 2016) as letters, and Porter-stems words
    // that are not ASCII byte by byte; neither can come from a query term.
    expect(keywordTokens('🎉 🧘 party time')).toEqual(['parti', 'time']);
    expect(fts5Words(['🎉 🧘 party time'])[0]).toEqual(['🧘', 'parti', 'time']);
    expect(keywordTokens('Straße')).toEqual(['straße']);
    expect(fts5Words(['Straße'])[0]).toEqual(['straß']);
    expect(keywordTokens('')).toEqual([]);
    expect(keywordTokens('  ...  !!! ')).toEqual([]);
  });
});

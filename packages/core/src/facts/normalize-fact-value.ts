import { normalizeDate } from './find-dates.js';

// Leading words that do not change what a value means: "a bike" is "my bike" is "bike".
const leadingDeterminers =
  /^(?:(?:a|an|the|my|our|his|her|their|some|any|one|der|die|das|den|dem|ein|eine|einen|mein|meine|el|la|los|las|un|una|mi|mis|le|les|l'|une|mon|ma|mes)\s+|l')+/u;
// Spellings of the same attribute, folded to the key the rest of mnemo uses.
const attributeSynonyms: Readonly<Record<string, string>> = {
  hometown: 'home_town',
  home_base: 'home_town',
  home_city: 'home_town',
  call_sign: 'callsign',
  e_mail: 'email',
  email_address: 'email',
  phone_number: 'phone',
  cell: 'phone',
  cell_number: 'phone',
  mobile: 'phone',
  mobile_number: 'phone',
  occupation: 'job',
  profession: 'job',
  birth_date: 'birthday',
  date_of_birth: 'birthday',
  birthday_date: 'birthday',
  first_name: 'name',
  full_name: 'name',
  node: 'node_id',
  node_number: 'node_id',
  username: 'handle',
  user_name: 'handle',
  nickname: 'handle',
  screen_name: 'handle',
  neighbor: 'neighbour',
  co_worker: 'coworker',
  mum: 'mother',
  mom: 'mother',
  dad: 'father',
  relay: 'main_relay',
};

/**
 * The form two values are compared in: Unicode-normalized, lower-cased, without leading articles or
 * possessives ("a", "my", "der", "la", …), surrounding punctuation and plural `s`; dates folded to
 * `14 june` whatever their spelling. "Hood River" and "hood river." compare equal; so do "June 14" and
 * "14th June". For comparison only: stored values keep the user's spelling.
 */
export function normalizeFactValue(value: string): string {
  const trimmed = value.normalize('NFKC').trim().replace(/’/g, "'");
  const date = normalizeDate(trimmed);
  if (date !== undefined) return date;
  return trimmed
    .toLowerCase()
    .replace(/^[\s"'“”«»(]+|[\s"'“”«»).,!?;:]+$/g, '')
    .replace(leadingDeterminers, '')
    .replace(/\s+/g, ' ')
    .split(' ')
    .map((word) => (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word))
    .join(' ');
}

/**
 * A normalized attribute key: snake_case of the words ("Home Town" → `home_town`), with common
 * synonyms folded (`hometown`, `home_base` → `home_town`; `call_sign` → `callsign`; `mom` → `mother`;
 * `favourite_*` → `favorite_*`). Empty when the words have no letters or digits.
 */
export function toAttributeKey(words: string): string {
  const key = words
    .normalize('NFKC')
    .toLowerCase()
    .replace(/^favourite\b/, 'favorite')
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
  return attributeSynonyms[key] ?? key;
}

/** A span of a sentence: its offsets and its text as said. */
export interface Span {
  readonly start: number;
  readonly end: number;
  readonly value: string;
}

// Words that end the clause a value is read from, in the languages the patterns cover. A "!" right
// before a letter or digit is a node id's sigil (!c0ffee42), not the end of a clause; a comma between a
// digit and three more is a thousands separator ($1,200); "(now) instead of" starts the old value.
const clauseBreak =
  /(?<!\d),|,(?!\d{3}(?!\d))|[;:?()[\]\n]|!(?![0-9a-z])|\.(?=\s|$)|\s[-–—]\s|\s(?:now\s+)?instead\s+of\b|\s(?:and|but|so|because|since|though|although|which|who|when|while|until|where|with|und|aber|weil|denn|mit|y|pero|porque|con|et|mais|parce|avec)\b/i;
const clauseBreakKeepingAnd =
  /[;:?()[\]\n]|!(?![0-9a-z])|\.(?=\s|$)|\s[-–—]\s|,\s(?!and\b|or\b|no\b|not\b)|\s(?:but|so|because|since|though|although|which|who|when|while|until|where|aber|weil|denn|pero|porque|mais|parce)\b/i;
// Words that trail a value without belonging to it ("Portland now", "120 dollars total").
const trailingFiller =
  /(?:\s+(?:now|too|also|anymore|any more|though|lol|haha|pls|plz|please|anyway|already|currently|nowadays|these days|total|in total|btw|tbh|yet|jetzt|auch|ahora|también|maintenant|aussi))+$/i;
const edgePunctuation = /^[\s"'“”‘’«»(]+|[\s"'“”‘’«»).,]+$/g;

/** Options of {@link captureClause}. */
export interface ClauseOptions {
  /** Most words a value may have; a longer clause yields nothing (it is probably not a value). Default 8. */
  readonly maxWords?: number;
  /** Keep "and"/", " inside the clause, for lists such as "metric units and no emoji". Default false. */
  readonly keepLists?: boolean;
}

/**
 * The clause that starts at `from` in `match`, cut at punctuation or a conjunction, without trailing
 * filler; its text is sliced from `text` (same offsets). `undefined` when empty or over `maxWords`.
 */
export function captureClause(
  text: string,
  match: string,
  from: number,
  options: ClauseOptions = {},
): Span | undefined {
  const rest = match.slice(from);
  const stop = (options.keepLists === true ? clauseBreakKeepingAnd : clauseBreak).exec(rest);
  let end = from + (stop === null ? rest.length : stop.index);
  const raw = match.slice(from, end).replace(trailingFiller, '');
  end = from + raw.length;
  return toSpan(text, from, end, options.maxWords ?? 8);
}

// Lower-case words allowed inside a proper name ("Stratford upon Avon", "Rio de Janeiro", "Frankfurt am Main").
const nameConnectors = new Set([
  'de',
  'del',
  'da',
  'do',
  'dos',
  'la',
  'le',
  'les',
  'am',
  'an',
  'der',
  'im',
  'upon',
  'on',
  'of',
  'sur',
  'en',
  'y',
  'von',
  'van',
]);
const nameWord = /^\p{Lu}[\p{L}\p{M}'’.-]*$|^\p{Lu}[\p{L}\p{M}'’.-]*\d*$/u;

/** Words that look like names at the start of a clause but are not ("I'm Fine", "I'm Back"). */
export const notNames = new Set(
  (
    "i im i'm me my mine you your he she it we they them this that these those there here the a an and or but " +
    'fine ok okay good great well here back home sorry sure ready done tired busy lost new not so just still ' +
    'happy glad sad excited hungry cold hot sick bored awake alive out off in on at away free open online ' +
    'everyone everybody nobody somebody someone anyone who what which where when why how hi hey hello yes no ' +
    'american canadian german french english british spanish italian mexican dutch swiss austrian australian ' +
    'irish scottish indian chinese japanese korean brazilian russian polish swedish norwegian danish finnish ' +
    'monday tuesday wednesday thursday friday saturday sunday january february march april may june july ' +
    'august september october november december today tomorrow tonight yesterday ' +
    "it's that's there's here's what's let's i'll i've i'd don't can't won't isn't dude bro lol omg wow yeah yay aww oh ah thanks"
  ).split(' '),
);

/**
 * A proper name (one to three capitalized words, with connectors like "de" or "upon" between them)
 * starting at `from`; `undefined` when the first word is not capitalized or is a common word ({@link notNames}).
 */
export function captureName(text: string, match: string, from: number, maxWords = 3): Span | undefined {
  const word = /\s*([^\s,;:!?()"]+)/y;
  word.lastIndex = from;
  let taken = 0;
  let end = from;
  let connector = false;
  for (let found = word.exec(match); found !== null && taken < maxWords; found = word.exec(match)) {
    const token = found[1]!.replace(/\.+$/, '');
    if (nameWord.test(token) && !notNames.has(token.toLowerCase())) {
      taken += 1;
      connector = false;
      end = word.lastIndex - (found[1]!.length - token.length);
      // A name does not run across punctuation ("Maren, callsign …").
      if (word.lastIndex < match.length && /[,;:!?()"]/.test(match[word.lastIndex]!)) break;
      continue;
    }
    if (taken > 0 && !connector && nameConnectors.has(token)) {
      connector = true;
      continue;
    }
    break;
  }
  return taken === 0 ? undefined : toSpan(text, from, end, maxWords + 1);
}

/** Whether a value starts with a capital letter (a proper name, as opposed to "a van"). */
export function isCapitalized(value: string): boolean {
  return /^\p{Lu}/u.test(value);
}

/** Calls `onMatch` with each match of a global `cue` in `match` and the offset where the cue ends. */
export function eachCue(match: string, cue: RegExp, onMatch: (found: RegExpExecArray, end: number) => void): void {
  cue.lastIndex = 0;
  for (let found = cue.exec(match); found !== null; found = cue.exec(match)) {
    onMatch(found, found.index + found[0].length);
    if (found[0].length === 0) cue.lastIndex += 1;
  }
}

function toSpan(text: string, from: number, end: number, maxWords: number): Span | undefined {
  const slice = text.slice(from, end);
  const leading = slice.length - slice.trimStart().length;
  const value = slice.replace(edgePunctuation, '');
  if (value.length === 0 || value.split(/\s+/).length > maxWords) return undefined;
  const start = from + leading;
  return { start, end: start + value.length, value };
}

/** A calendar date mentioned in a sentence. */
export interface DateMention {
  /** Offsets in the sentence and the words as said ("June 14", "21st of June", "2025-06-21"). */
  readonly start: number;
  readonly end: number;
  readonly value: string;
  /** Canonical form for comparison: `14 june`, `14 june 2025`. */
  readonly normalized: string;
  /** True when the sentence rules it out: "June 21, not the 14th". */
  readonly negated: boolean;
}

/** The months in English, January first; `monthNames[m - 1]` is month `m`. */
export const monthNames = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
/** A month's name or its abbreviation, as one regular-expression group. */
export const monthPattern =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const month = `${monthPattern}\\.?`;
const day = '(\\d{1,2})(?:st|nd|rd|th)?';
const year = '(?:,?\\s+(\\d{4}))?';
const isoDate = /\b(\d{4})-(\d{2})-(\d{2})\b/g;
const monthFirst = new RegExp(`\\b${month}\\s+${day}\\b${year}`, 'gi');
const dayFirst = new RegExp(`\\b${day}\\s+(?:of\\s+)?${month}\\b${year}`, 'gi');
const negation = /\b(?:not|nicht|no|pas|instead of|rather than|was)\s+(?:the\s+|on\s+(?:the\s+)?|am\s+|el\s+|le\s+)?$/i;

/**
 * The calendar dates (with a day and a month; ISO, "June 14", "14th of June", optional year) in a
 * sentence, in order. A date right after "not", "instead of" or "was" is marked `negated`. A bare day
 * ("the 21st") is not a date here: without a month it cannot be stored as one.
 */
export function findDates(sentence: string): DateMention[] {
  const found: DateMention[] = [];
  for (const match of sentence.matchAll(isoDate)) {
    found.push(mention(sentence, match, Number(match[3]), Number(match[2]), match[1]));
  }
  for (const match of sentence.matchAll(monthFirst)) {
    found.push(mention(sentence, match, Number(match[2]), monthNumber(match[1]!), match[3]));
  }
  for (const match of sentence.matchAll(dayFirst)) {
    found.push(mention(sentence, match, Number(match[1]), monthNumber(match[2]!), match[3]));
  }
  return found
    .filter((date) => date.normalized !== '')
    .sort((a, b) => a.start - b.start)
    .filter((date, index, all) => index === 0 || date.start >= all[index - 1]!.end);
}

/** The canonical form of a date written alone ("June 21" and "21st June" both give `21 june`), or `undefined`. */
export function normalizeDate(value: string): string | undefined {
  const [only] = findDates(value.trim());
  return only !== undefined && only.start === 0 && only.end === value.trim().length ? only.normalized : undefined;
}

function mention(
  sentence: string,
  match: RegExpMatchArray,
  dayNumber: number,
  monthIndex: number,
  yearText: string | undefined,
): DateMention {
  const start = match.index!;
  const valid = monthIndex >= 1 && monthIndex <= 12 && dayNumber >= 1 && dayNumber <= 31;
  return {
    start,
    end: start + match[0].length,
    value: match[0],
    normalized: valid
      ? `${dayNumber} ${monthNames[monthIndex - 1]}${yearText === undefined ? '' : ` ${yearText}`}`
      : '',
    negated: negation.test(sentence.slice(0, start)),
  };
}

/** The month (1–12) a name or abbreviation (`Sept.`, `march`) stands for; 0 for none. */
export function monthNumber(name: string): number {
  const prefix = name.toLowerCase().replace(/\.$/, '').slice(0, 3);
  return monthNames.findIndex((candidate) => candidate.startsWith(prefix)) + 1;
}

import { monthNames } from '@mnemo/core/internals';

/** Order of day and month in a numeric `03/04/2024`: day first (Europe) or month first (US). */
export type SlashOrder = 'day-first' | 'month-first';

/** Options of {@link parseSessionDate}. */
export interface ParseSessionDateOptions {
  /** How to read `NN/NN/YYYY` when both numbers are ≤ 12; without it such a date is ambiguous (`undefined`). */
  readonly slashOrder?: SlashOrder;
}

/** The forms {@link parseSessionDate} reads, for error messages. */
export const sessionDateExamples = [
  '1:56 pm on 8 May, 2023',
  '2023-05-08T13:56:00Z',
  '2023-05-08 13:56',
  '08.05.2023, 13:56:04',
  '05/08/2023 1:56 PM',
  'May 8, 2023',
] as const;

/**
 * Reads a session timestamp as a UTC instant (a time without a zone is read as UTC; an explicit `Z` or
 * `±HH:MM` offset is honoured). Forms: LoCoMo's `1:56 pm on 8 May, 2023`; ISO 8601 (`2023-05-08`,
 * `2023-05-08T13:56`, seconds, fractions, zone); `YYYY-MM-DD HH:MM[:SS]` and `YYYY/MM/DD`; dotted
 * `DD.MM.YYYY[, HH:MM[:SS]]`; `NN/NN/YYYY` (see {@link ParseSessionDateOptions.slashOrder}); textual
 * dates (`8 May 2023`, `May 8th, 2023`, `Monday, 8 May 2023`, abbreviated months) with a 12- or 24-hour
 * time before (`… on`, `… at`) or after them; Unix time in seconds or milliseconds. Returns `undefined`
 * for anything else, including impossible dates (31 June) and ambiguous slash dates.
 */
export function parseSessionDate(value: string | number, options: ParseSessionDateOptions = {}): Date | undefined {
  if (typeof value === 'number') return fromEpoch(value);
  const text = value.trim().replace(/\s+/g, ' ');
  if (/^\d{10}(\d{3})?$/.test(text)) return fromEpoch(Number(text));
  return readIso(text) ?? readNumeric(text, options) ?? readTextual(text);
}

/** Whether `NN/NN/YYYY` in `value` can only be read one way: the order it proves, else `undefined`. */
export function slashOrderOf(value: string): SlashOrder | undefined {
  const match = /^(\d{1,2})\/(\d{1,2})\/\d{4}\b/.exec(value.trim());
  if (match === null) return undefined;
  if (Number(match[1]) > 12) return 'day-first';
  if (Number(match[2]) > 12) return 'month-first';
  return undefined;
}

function fromEpoch(value: number): Date | undefined {
  if (!Number.isFinite(value) || value < 0) return undefined;
  return new Date(value >= 1e11 ? value : value * 1000);
}

const isoPattern =
  /^(\d{4})[-/](\d{2})[-/](\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s?(Z|UTC|[+-]\d{2}:?\d{2})?$/i;

function readIso(text: string): Date | undefined {
  const match = isoPattern.exec(text);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second, fraction, zone] = match;
  const milliseconds = fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1000);
  return build(
    Number(year),
    Number(month),
    Number(day),
    { hour: Number(hour ?? 0), minute: Number(minute ?? 0), second: Number(second ?? 0), milliseconds },
    zone,
  );
}

const numericPattern = /^(\d{1,2})([./])(\d{1,2})\2(\d{4})(?:,? (?:at )?(.+))?$/i;

function readNumeric(text: string, options: ParseSessionDateOptions): Date | undefined {
  const match = numericPattern.exec(text);
  if (match === null) return undefined;
  const [, first, separator, second, year, timeText] = match;
  let day = Number(first);
  let month = Number(second);
  if (separator === '/') {
    const order = day > 12 ? 'day-first' : month > 12 ? 'month-first' : options.slashOrder;
    if (order === undefined) return undefined;
    if (order === 'month-first') [day, month] = [month, day];
  }
  const time = timeText === undefined ? midnight : readTime(timeText);
  return time === undefined ? undefined : build(Number(year), month, day, time, time.zone);
}

interface TimeOfDay {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly milliseconds?: number;
  readonly zone?: string;
}

const midnight: TimeOfDay = { hour: 0, minute: 0, second: 0 };
const timePattern = /(\d{1,2})(?::(\d{2}))(?::(\d{2}))?(?:\s?([ap])\.?m\.?)?(?:\s?(Z|UTC|GMT|[+-]\d{2}:?\d{2}))?/i;

function readTime(text: string): TimeOfDay | undefined {
  const match = new RegExp(`^${timePattern.source}$`, 'i').exec(text.trim());
  return match === null ? undefined : timeFrom(match);
}

function timeFrom(match: RegExpExecArray): TimeOfDay | undefined {
  const [, hourText, minuteText, secondText, half, zone] = match;
  let hour = Number(hourText);
  if (half !== undefined) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (half.toLowerCase() === 'p' ? 12 : 0);
  }
  return { hour, minute: Number(minuteText), second: Number(secondText ?? 0), ...(zone === undefined ? {} : { zone }) };
}

const weekdayPrefix = /^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,? /i;
const dayMonthYear = /^(\d{1,2})(?:st|nd|rd|th)?(?: of)? ([a-z]+)\.?,? (\d{4})$/i;
const monthDayYear = /^([a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})$/i;

function readTextual(text: string): Date | undefined {
  // Take the time of day out wherever it sits ("1:56 pm on 8 May, 2023", "8 May 2023, 13:56"), with the
  // word or comma that joins it to the date; what is left must be a whole date.
  let time: TimeOfDay | undefined = midnight;
  let rest = text;
  const found = new RegExp(timePattern.source, 'i').exec(text);
  if (found !== null) {
    time = timeFrom(found);
    rest = `${text.slice(0, found.index)} ${text.slice(found.index + found[0].length)}`;
  }
  if (time === undefined) return undefined;
  rest = rest
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^(?:on|at)\b ?/i, '')
    .replace(/,? ?\b(?:on|at)$/i, '')
    .replace(/,$/, '')
    .trim()
    .replace(weekdayPrefix, '');
  const dmy = dayMonthYear.exec(rest);
  const mdy = dmy === null ? monthDayYear.exec(rest) : null;
  const parts =
    dmy !== null
      ? { day: dmy[1]!, month: dmy[2]!, year: dmy[3]! }
      : mdy !== null
        ? { day: mdy[2]!, month: mdy[1]!, year: mdy[3]! }
        : undefined;
  if (parts === undefined) return undefined;
  const name = parts.month.toLowerCase();
  const month = monthNames.findIndex(
    (candidate) =>
      candidate === name ||
      (name.length >= 3 && candidate.startsWith(name)) ||
      (name === 'sept' && candidate === 'september'),
  );
  if (month < 0) return undefined;
  return build(Number(parts.year), month + 1, Number(parts.day), time, time.zone);
}

function build(year: number, month: number, day: number, time: TimeOfDay, zone?: string): Date | undefined {
  const { hour, minute, second } = time;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, time.milliseconds ?? 0);
  const date = new Date(utc);
  if (date.getUTCDate() !== day || date.getUTCMonth() !== month - 1) return undefined;
  return new Date(utc - offsetMinutes(zone) * 60_000);
}

function offsetMinutes(zone: string | undefined): number {
  if (zone === undefined || /^(?:z|utc|gmt)$/i.test(zone)) return 0;
  const match = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
  return (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
}

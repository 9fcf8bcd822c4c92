import { findDates, monthNames, monthNumber, monthPattern } from '../facts/find-dates.js';

/** A stretch of calendar time a query names: a day, a month (of a year, or of any year) or a year; UTC. */
export interface QueryPeriod {
  readonly year?: number;
  /** 1–12. */
  readonly month?: number;
  /** 1–31, only with a month. */
  readonly day?: number;
}

const monthWord = monthPattern;
// A month with a year, or a month after a word that makes it one ("in May", not "may I").
const monthYear = new RegExp(`\\b${monthWord}\\.?,?\\s+(\\d{4})\\b`, 'gi');
const monthAlone = new RegExp(
  `\\b(?:in|during|since|by|until|of|early|late|mid|mid-|last|this|next|every|each)\\s+${monthWord}\\b(?!\\s+\\d)`,
  'gi',
);
const yearAlone = /\b(?:in|during|since|of|by|until)\s+((?:19|20)\d{2})\b/gi;

/**
 * The calendar periods a query names ("on 13 October 2023", "in June", "in July 2023", "in 2023"), most
 * specific first; empty when it names none. Relative expressions ("last week") are not resolved: a
 * question's own time is not the time of the chat it asks about.
 */
export function findQueryPeriods(query: string): QueryPeriod[] {
  const periods: QueryPeriod[] = [];
  let rest = query;
  for (const date of findDates(query)) {
    const [dayText, monthText, yearText] = date.normalized.split(' ');
    periods.push({
      day: Number(dayText),
      month: monthNames.indexOf(monthText!) + 1,
      ...(yearText === undefined ? {} : { year: Number(yearText) }),
    });
    rest = rest.replace(date.value, ' ');
  }
  for (const match of rest.matchAll(monthYear)) {
    periods.push({ month: monthNumber(match[1]!), year: Number(match[2]) });
    rest = rest.replace(match[0], ' ');
  }
  for (const match of rest.matchAll(monthAlone)) periods.push({ month: monthNumber(match[1]!) });
  for (const match of rest.matchAll(yearAlone)) periods.push({ year: Number(match[1]) });
  return periods;
}

/**
 * True when `time` (epoch ms) falls in one of the periods or within `slackDays` after it: what was said
 * about an event comes during it or soon after ("we went camping last week").
 */
export function withinPeriods(time: number, periods: readonly QueryPeriod[], slackDays: number): boolean {
  return periods.some((period) => {
    const date = new Date(time);
    const years = period.year === undefined ? [date.getUTCFullYear(), date.getUTCFullYear() - 1] : [period.year];
    return years.some((year) => {
      const start = Date.UTC(year, (period.month ?? 1) - 1, period.day ?? 1);
      const end =
        period.day !== undefined
          ? Date.UTC(year, period.month! - 1, period.day + 1)
          : period.month !== undefined
            ? Date.UTC(year, period.month, 1)
            : Date.UTC(year + 1, 0, 1);
      return time >= start && time < end + slackDays * 86_400_000;
    });
  });
}

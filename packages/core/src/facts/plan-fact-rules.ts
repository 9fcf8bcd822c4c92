import { captureClause, eachCue, isCapitalized } from './capture-span.js';
import type { FactDraft, FactRule } from './fact-rule.js';
import { findDates } from './find-dates.js';
import { toAttributeKey } from './normalize-fact-value.js';

const tripWord =
  /\b(?:trip|hike|hiking|loop|trek|trekking|journey|vacation|holiday|tour|expedition|permit|departure|start|starting|starts|leave|leaving|depart|departing|set off|head out|heading out|flight|fly|flying)\b/i;
const correctionCue =
  /\b(?:change of plans|changed?|moved|moving|postponed|pushed|rescheduled|delayed|instead|actually|not the|now (?:on|starts?|leaving))\b/i;
// "last fall I hiked it on June 3": a date in the past is not a plan.
const pastCue = /\b(?:last|ago|yesterday|went|was|were|did|had)\b/i;
// A plan worth keeping is some way off: "next month", "this summer", "in June" (not "tonight").
const futureCue =
  /\b(?:next|this (?:week|weekend|month|year|summer|winter|spring|fall|autumn)|in (?:january|february|march|april|may|june|july|august|september|october|november|december))\b/i;

// "starting June 14", "moved the trip to 21 June", "the permit came through for June 21, not the 14th".
const readTripDate: FactRule = ({ match, text, knows }) => {
  if (pastCue.test(match) && !correctionCue.test(match)) return [];
  const correction = correctionCue.test(match);
  if (!tripWord.test(match) && !(correction && knows('trip_date'))) return [];
  if (/\b(?:my|our|the)\s+(?:birthday|wedding|anniversary|appointment|exam|interview|surgery)\b/i.test(match))
    return [];
  const date = findDates(match).find((candidate) => !candidate.negated);
  if (date === undefined) return [];
  const confidence = correction
    ? 0.85
    : /\b(?:start|starting|starts|leave|leaving|depart|departing|on)\b/i.test(match)
      ? 0.8
      : 0.7;
  return [{ attribute: 'trip_date', value: text.slice(date.start, date.end), confidence, index: date.start }];
};

// "my birthday is June 3", "our wedding is on 3 May", "I moved my appointment to June 9", "I was born on 2 March 1990".
const readEventDates: FactRule = ({ match, text }) => {
  const drafts: FactDraft[] = [];
  const dates = findDates(match).filter((date) => !date.negated);
  const at = (end: number) => dates.find((date) => date.start >= end && date.start - end <= 3);
  const add = (event: string, end: number, confidence: number, index: number): void => {
    const date = at(end);
    if (date === undefined) return;
    const key = toAttributeKey(event);
    const attribute = key === 'birthday' ? 'birthday' : tripWord.test(event) ? 'trip_date' : `${key}_date`;
    drafts.push({ attribute, value: text.slice(date.start, date.end), confidence, index });
  };
  eachCue(
    match,
    /\b(?:my|our|the)\s+([a-z]+(?: [a-z]+)?)\s+(?:is|will be|has been moved to|was moved to|got moved to|moved to)\s+(?:on\s+|scheduled for\s+|set for\s+|planned for\s+)?/gi,
    (found, end) => {
      add(found[1]!, end, 0.8, found.index);
    },
  );
  eachCue(
    match,
    /\b(?:moved|pushed|postponed|rescheduled|changed)\s+(?:my|our|the)\s+([a-z]+)\s+to\s+/gi,
    (found, end) => add(found[1]!, end, 0.85, found.index),
  );
  eachCue(match, /\bi was born on\s+/gi, (found, end) => add('birthday', end, 0.85, found.index));
  return drafts;
};

// "I'm going to hike the Wonderland Trail next month", "planning the Timberline Trail loop around Mt Hood".
const readPlans: FactRule = ({ match, text }) => {
  const drafts: FactDraft[] = [];
  const cue =
    /\b(?:i'm|i am|we're|we are)\s+(?:going to|gonna|planning to|planning on|planning)\s+|^(?:planning to|planning on|planning)\s+|\b(?:i|we) (?:plan|intend) to\s+/gi;
  eachCue(match, cue, (found, end) => {
    const clause = captureClause(text, match, end, { maxWords: 10 });
    if (clause === undefined) return;
    // Only plans worth remembering, judged on the plan itself and what follows it: a named place or
    // event, a date, a trip, or a time some way ahead ("I'm gonna keep pushing" is none of these).
    const said = match.slice(end);
    const named = clause.value
      .split(/\s+/)
      .slice(1)
      .some((word) => isCapitalized(word));
    const lasting = named || tripWord.test(clause.value) || findDates(said).length > 0 || futureCue.test(said);
    if (lasting) drafts.push({ attribute: 'plans', value: clause.value, confidence: 0.65, index: found.index });
  });
  return drafts;
};

/** Plans (`plans`), trip dates with their corrections (`trip_date`), and dates of named events (`birthday`, `<event>_date`). */
export const planFactRules: readonly FactRule[] = [readTripDate, readEventDates, readPlans];

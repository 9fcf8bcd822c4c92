import { captureClause, captureName, eachCue, isCapitalized } from './capture-span.js';
import type { FactDraft, FactRule, FactRuleInput } from './fact-rule.js';
import { toAttributeKey } from './normalize-fact-value.js';

// "I have a question", "I've got a feeling", "I have a great time": idioms, not possessions.
const notPossessions =
  /\b(?:question|questions|idea|feeling|problem|problems|issue|issues|doubt|minute|moment|sec|second|look|clue|chance|break|rest|time|fun|lunch|dinner|breakfast|drink|shower|nap|word|cold|headache|fever|meeting|call|date|appointment|plan|plans|point|go|try|lot|bit|way|day|night|week|weekend|job to do|request|favou?r|suggestion|news|story|stories|shot|surge|blast|one|surprise|recommendations?|offers?|leads?|turnout|bond|hike|trip|lease|pictures?|pics?|photos?|schedule|stuff|things?|something|anything|everything|nothing|clarity|chat|talk|conversation|experience|memories|memory|tournament|party|exam|concert|event|race|competition|match)\b/i;
const amount = /(\d+(?:[.,]\d+)?\s?(?:mah|ah|wh))\b/i;
// Subjects of "my X is Y" that name the user themselves, a passing state, or a figure of speech.
const notAttributes = new Set(
  'name names node bad point guess question problem issue pleasure turn fault idea concern answer reply day week life head mind heart phone battery screen signal plan plans god gosh goodness english'.split(
    ' ',
  ),
);
// Values of "my X is Y" that describe a passing state ("my battery is at 40%", "my phone is dead").
const passingState =
  /^(?:at|almost|nearly|about|around|so|too|very|really|quite|pretty|kinda|kind of|a bit|dead|low|full|empty|broken|down|off|on|out|gone|not|getting|being|going|gonna|fine|ok|okay|good|bad|great|here|there|busy|running|charging|done)\b/i;

// "I have a 3000 mAh battery", "I carry a 10000 mAh power bank", "also bought a spare 18650".
const readPossessions: FactRule = ({ text, match }) => {
  const drafts: FactDraft[] = [];
  // "got" is left out: "I got a great shot", "got some news" are events, not possessions. Without a subject
  // only "bought"/"ordered" count: a sentence-initial "Have a great hike!" is a wish.
  const cue =
    /(?:\bi\s+|\bi've\s+|\bwe\s+)(?:just |also |now |still )?(have got|have|got|own|carry|drive|ride|bought|ordered)\s+(?=(?:a|an|two|three|four|one|\d+|some|my|our)\s)|(?:^|\b(?:and|also|just)\s+)(bought|ordered)\s+(?=(?:a|an|two|three|four|one|\d+|some)\s)/gi;
  eachCue(match, cue, (found, end) => {
    const verb = (found[1] ?? found[2]!).toLowerCase();
    if (verb === 'got' && !/\b(?:i've|have)\s+got/i.test(found[0])) return;
    const clause = captureClause(text, match, end, { maxWords: 7 });
    const value = clause?.value.replace(/\s+(?:for|from|at|on)\s+.*$/i, '');
    if (value === undefined || notPossessions.test(value) || !hasNoun(value)) return;
    const confidence = verb === 'bought' || verb === 'ordered' ? 0.65 : 0.75;
    drafts.push({ attribute: 'owns', value, confidence, index: found.index });
  });
  // "lost" is left out: "I lost my job", "I lost a friend", "I lost my keys again" are not the end of a possession.
  eachCue(
    match,
    /\bi (?:no longer|don't|do not|dont) (?:have|own)\s+(?:a |an |my |any )?|\bi (?:sold|gave away|got rid of)\s+(?:my |a |an |the )?/gi,
    (found, end) => {
      const clause = captureClause(text, match, end, { maxWords: 6 });
      if (
        clause !== undefined &&
        !/^(?:to|it|them|that|this|those|these|one)\b/i.test(clause.value) &&
        !notPossessions.test(clause.value) &&
        hasNoun(clause.value)
      ) {
        drafts.push({
          attribute: 'owns',
          value: clause.value,
          confidence: 0.7,
          polarity: 'negate',
          index: found.index,
        });
      }
    },
  );
  // "node runs on a 3000 mAh 18650", "my battery is 3000 mAh": the capacity of the user's battery.
  eachCue(
    match,
    /\b(?:(?:my |the |this )?(?:node|radio|device|tracker|handheld)\s+runs on|(?:my |the )?battery(?: capacity)? is|(?:my |the )?(?:battery|cell) has)\s+(?:a |an |one )?/gi,
    (found, end) => {
      const capacity = amount.exec(match.slice(end, end + 20));
      if (capacity !== null)
        drafts.push({ attribute: 'battery_capacity', value: capacity[1]!, confidence: 0.8, index: found.index });
    },
  );
  return drafts;
};

// "my budget is 120 dollars", "my main relay is a solar node called LARCH-RIDGE", "our cabin node is !c0ffee42",
// "my favourite color is blue", and a change said as one: "my main relay is now BEAR-CREEK", "my new relay is …",
// "the cloud budget is $2,250 a month now instead of $1,200" (of an attribute the user already has).
const readMyAttribute: FactRule = (input) => {
  const { match } = input;
  const drafts: FactDraft[] = [];
  const changed = /\binstead\s+of\b/i.test(match);
  eachCue(
    match,
    /\b(my|our|the) (new )?((?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*)\s+(?:is|are)\s+(now\s+|currently\s+)?|\b(my|our) ()((?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*)\s*(?:=|:)\s+()/gi,
    (found, end) => {
      const owner = (found[1] ?? found[5])!.toLowerCase();
      const change = changed || found[2] !== undefined || (found[4] ?? '').toLowerCase().startsWith('now');
      // "the X is …" only states the user's own X when it changes one they already have.
      if (owner === 'the' && (!change || input.knownAttribute(toAttributeKey((found[3] ?? found[7])!)) === undefined))
        return;
      const draft = attributeDraft(input, (found[3] ?? found[7])!, end, found.index, { change });
      if (draft !== undefined) drafts.push(draft);
    },
  );
  // "I switched my main relay to BEAR-CREEK", "changed our repeater from !c0ffee42 to !d00d0001", "moved my trip over to June 21".
  eachCue(
    match,
    /\b(?:switched|changed|moved|swapped|updated)\s+(?:my|our)\s+((?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*)\s+(?:over\s+)?(?:from\s+[^,.;?]+?\s+)?to\s+/gi,
    (found, end) => {
      const draft = attributeDraft(input, found[1]!, end, found.index, { change: true });
      if (draft !== undefined) drafts.push(draft);
    },
  );
  return drafts;
};

/**
 * The fact of "my <words> is <value>" (or a change of it) whose value starts at `end`, when the words name
 * an attribute and the value looks like data: a number, an id, a proper name, or any favourite thing. The
 * words map to the attribute the user already has for them ("cloud budget" → `monthly_cloud_budget`); a
 * change replaces the current value.
 */
function attributeDraft(
  input: FactRuleInput,
  words: string,
  end: number,
  index: number,
  options: { readonly change: boolean },
): FactDraft | undefined {
  const { text, match } = input;
  const said = toAttributeKey(words);
  const key = said === '' ? '' : (input.knownAttribute(said) ?? said);
  const first = words.toLowerCase().split(/\s+/)[0]!;
  // "My pup Toby is …": a name inside the subject makes it a person or pet, not an attribute. The
  // first word decides ("my node battery is …" is a reading), so "our cabin node is !c0ffee42" counts.
  if (key === '' || /\p{Lu}/u.test(words) || notAttributes.has(first)) return undefined;
  const clause = captureClause(text, match, end, { maxWords: 8 });
  if (clause === undefined || passingState.test(clause.value)) return undefined;
  const called = /\b(?:called|named)\s+/i.exec(match.slice(clause.start, clause.end));
  // A change names the new value first ("to BEAR-CREEK on Bear Butte"); a description names it after "called".
  const named =
    called === null
      ? options.change
        ? leadingName(text, match, clause.start)
        : undefined
      : captureNamed(text, match, clause.start + called.index + called[0].length);
  const value = named ?? clause.value;
  if (!key.startsWith('favorite_') && !/\d|![0-9a-f]{4}/i.test(value) && !isCapitalized(value) && named === undefined)
    return undefined;
  return {
    attribute: key,
    value,
    confidence: named === undefined && !options.change ? 0.6 : 0.75,
    index,
    ...(options.change ? { replaces: true } : {}),
  };
}

// Words a clause cut short can end on ("a tasty and easy recipe" → "a tasty"): not a thing.
const notNouns = new Set(
  'a an the some any few many more tasty good great nice new old big small little similar other own'.split(' '),
);

/** Whether a value ends on something that can be a thing ("a power bank"), not on an article or adjective ("a", "a tasty"). */
function hasNoun(value: string): boolean {
  const last = value.toLowerCase().split(/\s+/).at(-1) ?? '';
  return last.length > 0 && !notNouns.has(last);
}

/** A node id (`!d00d0001`), device or proper name that a value starts with. */
function leadingName(text: string, match: string, from: number): string | undefined {
  const id = /^![0-9a-f]{8}\b/i.exec(match.slice(from));
  return id === null ? captureNamed(text, match, from) : text.slice(from, from + id[0].length);
}

/** A device or proper name after "called": `LARCH-RIDGE`, `Rex`. */
function captureNamed(text: string, match: string, from: number): string | undefined {
  const device = /^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+/.exec(match.slice(from));
  if (device !== null) return text.slice(from, from + device[0].length);
  return captureName(text, match, from)?.value;
}

/** Possessions (`owns`, with selling and losing as negations), battery capacity, and "my X is Y" for data-like values. */
export const possessionFactRules: readonly FactRule[] = [readPossessions, readMyAttribute];

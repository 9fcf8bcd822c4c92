import { captureClause, captureName, eachCue, isCapitalized, notNames } from './capture-span.js';
import type { FactDraft, FactRule, FactRuleInput } from './fact-rule.js';

const nodeId = '(![0-9a-f]{8})\\b';
const jobEnding =
  /(?:er|or|ist|ian|ant|ent|nurse|engineer|doctor|chef|cook|pilot|medic|ranger|guide|student|vet|surgeon|lawyer|architect|clerk|nanny|tech|technician)$/i;
const notJobs = new Set(
  'beginner member user owner believer lover fan smoker drinker newcomer foreigner stranger winner loser customer character other bit little lot big huge total real part friend mess wreck hiker runner walker reader gamer biker swimmer climber traveler traveller learner expert'.split(
    ' ',
  ),
);

/**
 * The subject a third-person cue points at: "he"/"she" → the person last named, "my sister" → the one
 * sister the user named, a capitalized name → that name; `undefined` when it cannot be told.
 */
export function subjectOf(input: FactRuleInput, words: string, index: number): string | undefined {
  const lower = words.toLowerCase();
  if (lower === 'he' || lower === 'she' || lower === 'his' || lower === 'her' || lower === 'they' || lower === 'their')
    return input.personBefore(index);
  const relation = /^my\s+(.+)$/i.exec(words);
  if (relation !== null) return input.personCalled(relation[1]!.toLowerCase().replace(/\s+/g, '_'));
  return notNames.has(lower) || !isCapitalized(words) ? undefined : words;
}

const readName: FactRule = ({ text, match }) => {
  const drafts: FactDraft[] = [];
  eachCue(match, /\b(my name is|my name's|call me|i go by|people call me|i am called)\s+/gi, (found, end) => {
    const explicit = found[1]!.toLowerCase().startsWith('my name');
    const name =
      captureName(text, match, end) ?? (explicit ? captureClause(text, match, end, { maxWords: 3 }) : undefined);
    if (name === undefined) return;
    const confidence = isCapitalized(name.value) ? (explicit ? 0.95 : 0.9) : 0.7;
    drafts.push({ attribute: 'name', value: name.value, confidence, index: found.index });
  });
  // "I'm Maren" needs a capital: "I'm fine", "i'm here", "I'm in Bend" are not names.
  eachCue(match, /(?:^|[\s,;(])(i'm|i am)\s+/gi, (found, end) => {
    const name = captureName(text, match, end, 2);
    if (name !== undefined) drafts.push({ attribute: 'name', value: name.value, confidence: 0.8, index: found.index });
  });
  return drafts;
};

const readAge: FactRule = ({ match }) => {
  const drafts: FactDraft[] = [];
  eachCue(
    match,
    /\b(?:i'm|i am|my age is)\s+(\d{1,3})(?=\s*(?:$|[,.;!]|and\b|years?\b|yrs?\b|y\/?o\b|year-old\b))/gi,
    (found) => {
      const age = Number(found[1]);
      if (age >= 1 && age <= 120)
        drafts.push({ attribute: 'age', value: found[1]!, confidence: 0.85, index: found.index });
    },
  );
  return drafts;
};

const readWork: FactRule = ({ text, match }) => {
  const drafts: FactDraft[] = [];
  eachCue(match, /\b(i work as (?:a|an)|my (?:job|occupation|profession) is(?: (?:a|an))?)\s+/gi, (found, end) => {
    const job = captureClause(text, match, end, { maxWords: 4 });
    if (job !== undefined) drafts.push({ attribute: 'job', value: job.value, confidence: 0.9, index: found.index });
  });
  eachCue(match, /\b(?:i'm|i am) (?:a|an)\s+/gi, (found, end) => {
    const job = captureClause(text, match, end, { maxWords: 3 });
    const words = job?.value.toLowerCase().split(/\s+/) ?? [];
    if (job === undefined || words.some((word) => notJobs.has(word)) || !jobEnding.test(words[words.length - 1]!))
      return;
    drafts.push({ attribute: 'job', value: job.value, confidence: 0.65, index: found.index });
  });
  eachCue(match, /\bi work (?:at|for)\s+/gi, (found, end) => {
    const employer = captureName(text, match, end, 4);
    if (employer !== undefined)
      drafts.push({ attribute: 'employer', value: employer.value, confidence: 0.85, index: found.index });
  });
  return drafts;
};

/** A place after a cue: a proper name, or (when `lowercase` allows) a short clause at lower confidence. */
function place(input: FactRuleInput, end: number, lowercase: boolean): { value: string; named: boolean } | undefined {
  const named = captureName(input.text, input.match, end, 4);
  if (named !== undefined) return { value: named.value, named: true };
  if (!lowercase) return undefined;
  const clause = captureClause(input.text, input.match, end, { maxWords: 4 });
  return clause === undefined || /^(?:it|there|here|this|that|which)\b/i.test(clause.value)
    ? undefined
    : { value: clause.value, named: false };
}

const readHome: FactRule = (input) => {
  const { match } = input;
  const drafts: FactDraft[] = [];
  const add = (attribute: string, cue: RegExp, lowercase: boolean, confidence: number, polarity?: 'negate'): void => {
    eachCue(match, cue, (found, end) => {
      const where = place(input, end, lowercase);
      if (where === undefined) return;
      const draft = { attribute, value: where.value, confidence: where.named ? confidence : 0.6, index: found.index };
      drafts.push(polarity === undefined ? draft : { ...draft, polarity });
    });
  };
  add(
    'lives_in',
    /\bi (?:still |now |currently )?(?:live|reside|am living|am based)\s+in\s+|\bi'm (?:living|based) in\s+/gi,
    true,
    0.9,
  );
  add('lives_in', /\bi (?:just |recently |have |'ve )?moved to\s+/gi, false, 0.8);
  add('lives_in', /\bi (?:no longer|don't|do not|dont) live in\s+/gi, true, 0.8, 'negate');
  add('home_town', /\b(?:i'm|i am|i come) (?:originally )?from\s+/gi, false, 0.8);
  add('home_town', /\b(?:my\s+)?(?:home ?town|home base|home city)\s+(?:is|=|:)\s+/gi, true, 0.85);
  add('home_town', /\bi grew up in\s+/gi, false, 0.75);
  return drafts;
};

// "Tomas lives in Bend", "she works at Intel", "my sister lives in Bend": facts about someone else.
const readOthersHome: FactRule = (input) => {
  const { text, match } = input;
  const drafts: FactDraft[] = [];
  const who =
    "(?:\\b[Mm]y ((?:best )?[a-z]+)|\\b([Hh]e|[Ss]he)|(\\p{Lu}[\\p{L}'-]+))\\s+(?:now\\s+|still\\s+|currently\\s+)?";
  const cues: [RegExp, string][] = [
    [new RegExp(`${who}(?:lives|is living|is based|resides)\\s+in\\s+`, 'gu'), 'lives_in'],
    [new RegExp(`${who}(?:is|comes) from\\s+`, 'gu'), 'home_town'],
    [new RegExp(`${who}works (?:at|for)\\s+`, 'gu'), 'employer'],
  ];
  for (const [cue, attribute] of cues) {
    eachCue(match, cue, (found, end) => {
      const subject = subjectOf(
        input,
        found[1] === undefined ? (found[2] ?? found[3]!) : `my ${found[1]}`,
        found.index,
      );
      const value =
        captureName(text, match, end, 4) ??
        (attribute === 'lives_in' ? captureClause(text, match, end, { maxWords: 4 }) : undefined);
      if (subject === undefined || value === undefined || subject.toLowerCase() === 'i') return;
      drafts.push({
        subject,
        attribute,
        value: value.value,
        confidence: isCapitalized(value.value) ? 0.8 : 0.55,
        index: found.index,
      });
    });
  }
  return drafts;
};

const readHandles: FactRule = (input) => {
  const { match } = input;
  const drafts: FactDraft[] = [];
  eachCue(match, /\b(?:(my|his|her)\s+)?call\s?sign(?:\s+is|:)?\s+([a-z0-9/]{3,10})\b/gi, (found) => {
    const sign = found[2]!;
    if (!/\d/.test(sign) || !/[a-z]/i.test(sign)) return;
    const subject =
      found[1] === undefined || found[1].toLowerCase() === 'my' ? 'user' : subjectOf(input, found[1], found.index);
    if (subject !== undefined)
      drafts.push({ subject, attribute: 'callsign', value: sign, confidence: 0.9, index: found.index });
  });
  eachCue(
    match,
    /\bmy (?:handle|username|user name|nick|nickname|screen name)(?:\s+is|:)?\s+([^\s,;!?]+)/gi,
    (found) => {
      drafts.push({ attribute: 'handle', value: found[1]!.replace(/[.]+$/, ''), confidence: 0.85, index: found.index });
    },
  );
  eachCue(
    match,
    /\b(?:my (?:e-?mail|mail)(?: address)?(?:\s+is|:)|email me at)\s+([\w.+-]+@[\w-]+(?:\.[\w-]+)+)/gi,
    (found) => {
      drafts.push({ attribute: 'email', value: found[1]!, confidence: 0.9, index: found.index });
    },
  );
  eachCue(
    match,
    /\bmy (?:phone|phone number|number|cell|mobile)(?: number)?(?:\s+is|:)\s+(\+?\d[\d\s().-]{5,}\d)/gi,
    (found) => {
      drafts.push({ attribute: 'phone', value: found[1]!, confidence: 0.85, index: found.index });
    },
  );
  return drafts;
};

const readNodeIds: FactRule = (input) => {
  const { match } = input;
  const drafts: FactDraft[] = [];
  eachCue(
    match,
    new RegExp(`\\b(my|this|our|his|her|their)\\s+(?:main\\s+)?node(?:\\s+id)?(?:\\s+is|:|=)?\\s+${nodeId}`, 'gi'),
    (found) => {
      const owner = found[1]!.toLowerCase();
      const subject =
        owner === 'my' || owner === 'this' || owner === 'our' ? 'user' : subjectOf(input, owner, found.index);
      if (subject !== undefined)
        drafts.push({
          subject,
          attribute: 'node_id',
          value: found[2]!,
          confidence: owner === 'this' ? 0.8 : 0.85,
          index: found.index,
        });
    },
  );
  eachCue(match, new RegExp(`(\\p{Lu}[\\p{L}-]+)'s\\s+node(?:\\s+id)?(?:\\s+is|:)?\\s+${nodeId}`, 'giu'), (found) => {
    const subject = subjectOf(input, found[1]!, found.index);
    if (subject !== undefined)
      drafts.push({ subject, attribute: 'node_id', value: found[2]!, confidence: 0.8, index: found.index });
  });
  // "a solar node called LARCH-RIDGE on Larch Mtn, id !5c11e08a": the id of the named device.
  eachCue(
    match,
    new RegExp(
      `\\b(?:called|named)\\s+([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+|\\p{Lu}[\\p{L}-]+)[^!?]{0,60}?\\bid:?\\s+${nodeId}`,
      'gu',
    ),
    (found) => {
      drafts.push({ subject: found[1]!, attribute: 'node_id', value: found[2]!, confidence: 0.75, index: found.index });
    },
  );
  return drafts;
};

/** Name, age, job and employer, home (lives in, home town) of the user and of people they name, callsign, handle, e-mail, phone, node ids. */
export const identityFactRules: readonly FactRule[] = [
  readName,
  readAge,
  readWork,
  readHome,
  readOthersHome,
  readHandles,
  readNodeIds,
];

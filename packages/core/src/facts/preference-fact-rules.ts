import { captureClause, eachCue } from './capture-span.js';
import type { FactDraft, FactRule, FactRuleInput } from './fact-rule.js';

const habitVerbs =
  'eat|drink|wear|take|carry|bring|drive|ride|cook|watch|listen|read|play|check|sleep|wake|run|walk|hike|fly|travel|buy|pay|pack|charge|keep|order|go to bed|get up|smoke|skip';

// Objects that make "I love …" a feeling about the conversation, not a taste.
const notTastes =
  /^(?:you|u|it|that|this|them|those|these|him|her|how|when|what|the idea|your|is|are|was|were|so|too|very|every|say|think|know|hear|see you|talk)\b/i;

/** Splits "metric units and no emoji" into its items. */
function listItems(value: string): string[] {
  return value
    .split(/\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s+or\s+)\s*/i)
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/** "use metric" → "metric", "never use emoji" / "don't use emoji" / "avoid emoji" → "no emoji"; other requests stay as said. */
function preferenceValue(verb: string, rest: string): string {
  const lower = verb.toLowerCase();
  if (/^(?:never use|don't use|do not use|dont use|avoid|stop using|no more)$/.test(lower)) return `no ${rest}`;
  if (lower === 'use' || lower === 'always use') return rest;
  return `${verb} ${rest}`.replace(/^always\s+/i, '');
}

// "pls always use metric units and no emoji", "please never use emoji", "from now on reply in German".
const readRequests: FactRule = ({ text, match }) => {
  const drafts: FactDraft[] = [];
  const cue =
    /(?:^|[\s,;])(?:(please|pls|plz|kindly)\s+)?(always|never|from now on|in future|in the future)?,?\s*(never use|don't use|do not use|dont use|avoid|stop using|use|reply|respond|answer|write|talk|speak|keep)\s+/gi;
  eachCue(match, cue, (found, end) => {
    const verb = found[3]!.toLowerCase();
    // A request is the user's when it opens the sentence or a clause, follows "I"/"we", or says please/always:
    // "dance floors help avoid injuries" and "… to avoid burnout" are not requests.
    const before = match.slice(0, found.index + found[0].search(/[^\s,;]/)).trimEnd();
    if (
      found[1] === undefined &&
      found[2] === undefined &&
      before !== '' &&
      !/(?:[,;:]|\b(?:i|we|and|so|also|but|then))$/i.test(before)
    )
      return;
    const lasting =
      found[2] !== undefined || /^(?:never use|don't use|do not use|dont use|avoid|stop using)$/.test(verb);
    const clause = captureClause(text, match, end, { keepLists: true, maxWords: 10 });
    if (clause === undefined || (!lasting && !isStandingRequest(found[1] !== undefined, verb, clause.value))) return;
    const said = `${found[2]?.toLowerCase() === 'never' ? 'never ' : ''}${found[3]!}`;
    listItems(clause.value).forEach((item, position) => {
      const value = /^no\s/i.test(item) ? item : preferenceValue(said, item);
      drafts.push({ attribute: 'prefers', value, confidence: lasting ? 0.85 : 0.6, index: found.index + position });
    });
  });
  eachCue(match, /\b(?:i|we) (?:really |strongly |much )?prefer\s+/gi, (found, end) => {
    const clause = captureClause(text, match, end, { maxWords: 8 });
    const value = clause?.value.replace(/\s+(?:over|to|rather than)\s+.*$/i, '');
    if (value !== undefined && value.length > 0 && !notTastes.test(value))
      drafts.push({ attribute: 'prefers', value, confidence: 0.85, index: found.index });
  });
  // Habits only: "I never eat meat", "I always carry a spare"; not "I always feel …" or "I never decided …".
  eachCue(match, new RegExp(`\\bi (always|never)\\s+(?=(?:${habitVerbs})\\b)`, 'gi'), (found, end) => {
    const clause = captureClause(text, match, end, { maxWords: 6 });
    if (clause !== undefined)
      drafts.push({
        attribute: 'prefers',
        value: `${found[1]!.toLowerCase()} ${clause.value}`,
        confidence: 0.7,
        index: found.index,
      });
  });
  return drafts;
};

/**
 * Whether a polite request without "always"/"never" is still a standing preference: "please use metric",
 * "please reply in German", "pls keep it short" are; "please write a poem" is a one-off task.
 */
function isStandingRequest(polite: boolean, verb: string, rest: string): boolean {
  if (!polite) return false;
  if (verb === 'keep') return /\b(?:short|brief|concise|simple|under|below)\b/i.test(rest);
  if (verb === 'use' || verb === 'avoid' || verb.includes('use')) return true;
  return /^(?:in|only|briefly|short|shorter|with|without)\b/i.test(rest);
}

function taste(
  input: FactRuleInput,
  cue: RegExp,
  draft: (found: RegExpExecArray, value: string) => FactDraft | undefined,
): FactDraft[] {
  const drafts: FactDraft[] = [];
  eachCue(input.match, cue, (found, end) => {
    const clause = captureClause(input.text, input.match, end, { maxWords: 6 });
    if (clause === undefined || notTastes.test(clause.value.replace(/^(?:to|also)\s+/i, ''))) return;
    const made = draft(found, clause.value.replace(/^(?:to|also|both|all)\s+/i, ''));
    if (made !== undefined) drafts.push(made);
  });
  return drafts;
}

// "I love hiking", "I'm a big fan of Ursula Le Guin", "I hate cold coffee", "I don't like X anymore".
const readTastes: FactRule = (input) => {
  const ended = /\b(?:any ?more|no longer|not any longer|these days no)\b/i.test(input.match);
  return [
    ...taste(
      input,
      /\bi (?:really |absolutely |totally |just |also |truly )?(like|love|enjoy|adore)\s+/gi,
      (found, value) => ({
        attribute: 'likes',
        value,
        confidence: found[1]!.toLowerCase() === 'like' ? 0.8 : 0.85,
        index: found.index,
      }),
    ),
    ...taste(input, /\b(?:i'm|i am) (?:a )?(?:big |huge |massive )?fan of\s+/gi, (found, value) => ({
      attribute: 'likes',
      value,
      confidence: 0.8,
      index: found.index,
    })),
    ...taste(
      input,
      /\bi (?:really )?(?:hate|dislike|detest|loathe|can't stand|cannot stand|don't like|do not like|dont like|don't enjoy)\s+/gi,
      (found, value) =>
        ended && /n't|not/i.test(found[0])
          ? { attribute: 'likes', value, confidence: 0.8, polarity: 'negate', index: found.index }
          : { attribute: 'dislikes', value, confidence: 0.8, index: found.index },
    ),
    ...taste(input, /\bi no longer (?:like|love|enjoy)\s+/gi, (found, value) => ({
      attribute: 'likes',
      value,
      confidence: 0.8,
      polarity: 'negate',
      index: found.index,
    })),
    ...taste(input, /\b(?:i'm|i am) allergic to\s+/gi, (found, value) => ({
      attribute: 'allergic_to',
      value,
      confidence: 0.9,
      index: found.index,
    })),
  ];
};

/** Standing requests and preferences (`prefers`), tastes (`likes`, `dislikes`, with "no longer" as a negation) and allergies. */
export const preferenceFactRules: readonly FactRule[] = [readRequests, readTastes];

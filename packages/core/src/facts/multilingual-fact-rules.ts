import { captureClause, captureName, eachCue } from './capture-span.js';
import type { FactDraft, FactRule, FactRuleInput } from './fact-rule.js';

type Reader = (input: FactRuleInput, end: number) => string | undefined;

const name: Reader = ({ text, match }, end) => captureName(text, match, end, 3)?.value;
const clause: Reader = ({ text, match }, end) => captureClause(text, match, end, { maxWords: 6 })?.value;

/** One cue of one language: what it reads and how sure it is. */
interface Cue {
  readonly pattern: RegExp;
  readonly attribute: string;
  readonly read: Reader;
  readonly confidence: number;
}

// German, Spanish and French: enough to show facts keep the user's language (`text` stays as said).
const cues: readonly Cue[] = [
  { pattern: /\b(?:ich heiße|ich heisse|mein name ist)\s+/giu, attribute: 'name', read: name, confidence: 0.95 },
  { pattern: /\b(?:ich wohne|ich lebe)\s+in\s+/giu, attribute: 'lives_in', read: name, confidence: 0.9 },
  { pattern: /\bich komme aus\s+/giu, attribute: 'home_town', read: name, confidence: 0.8 },
  { pattern: /\bich (?:mag|liebe)\s+(?!keine?n?\b|nicht\b)/giu, attribute: 'likes', read: clause, confidence: 0.8 },
  { pattern: /\bich (?:hasse|mag keine?n?|mag nicht)\s+/giu, attribute: 'dislikes', read: clause, confidence: 0.8 },
  { pattern: /\b(?:me llamo|mi nombre es)\s+/giu, attribute: 'name', read: name, confidence: 0.95 },
  { pattern: /\b(?:vivo|resido)\s+en\s+/giu, attribute: 'lives_in', read: name, confidence: 0.9 },
  { pattern: /\bsoy de\s+/giu, attribute: 'home_town', read: name, confidence: 0.8 },
  {
    pattern: /(?<!\bno\s)\bme (?:gusta|gustan|encanta|encantan)\s+/giu,
    attribute: 'likes',
    read: clause,
    confidence: 0.8,
  },
  { pattern: /\b(?:no me gusta|no me gustan|odio)\s+/giu, attribute: 'dislikes', read: clause, confidence: 0.8 },
  { pattern: /\b(?:je m'appelle|mon nom est|je m’appelle)\s+/giu, attribute: 'name', read: name, confidence: 0.95 },
  {
    pattern: /\b(?:j'habite|je vis|j’habite)\s+(?:à|a|en|au|aux)\s+/giu,
    attribute: 'lives_in',
    read: name,
    confidence: 0.9,
  },
  { pattern: /\bje viens de\s+/giu, attribute: 'home_town', read: name, confidence: 0.8 },
  { pattern: /\bj'(?:aime|adore)\s+(?:bien\s+|beaucoup\s+)?/giu, attribute: 'likes', read: clause, confidence: 0.8 },
  { pattern: /\b(?:je n'aime pas|je déteste)\s+/giu, attribute: 'dislikes', read: clause, confidence: 0.8 },
];

// "Ich mag Kaffee nicht": the German negation trails the object.
const trailingNicht = /\s+nicht$/i;

const readOtherLanguages: FactRule = (input) => {
  const drafts: FactDraft[] = [];
  for (const cue of cues) {
    eachCue(input.match, cue.pattern, (found, end) => {
      const value = cue.read(input, end);
      if (value === undefined) return;
      const negated = cue.attribute === 'likes' && trailingNicht.test(value);
      drafts.push({
        attribute: negated ? 'dislikes' : cue.attribute,
        value: value.replace(trailingNicht, ''),
        confidence: cue.confidence,
        index: found.index,
      });
    });
  }
  return drafts;
};

/** Name, where the user lives and comes from, likes and dislikes in German, Spanish and French. */
export const multilingualFactRules: readonly FactRule[] = [readOtherLanguages];

import { captureName, eachCue, notNames } from './capture-span.js';
import type { FactDraft, FactRule } from './fact-rule.js';
import { toAttributeKey } from './normalize-fact-value.js';
import { oneOfPersonRelations } from './single-valued-attributes.js';

/**
 * The words for people a user names ("my buddy Tomas"), each stored as an attribute of the user
 * (`buddy` = "Tomas"), after {@link toAttributeKey} folding (`mom` → `mother`, `neighbor` → `neighbour`).
 */
export const personRelations: readonly string[] = [
  'best_friend',
  'friend',
  'buddy',
  ...oneOfPersonRelations,
  'sister',
  'brother',
  'son',
  'daughter',
  'kid',
  'child',
  'cousin',
  'aunt',
  'uncle',
  'grandmother',
  'grandfather',
  'boss',
  'colleague',
  'coworker',
  'roommate',
  'flatmate',
  'neighbour',
  'teammate',
  'mentor',
];

/** Animals a user names ("my dog Rex"): an attribute of the user like the people words, but not a person. */
export const petRelations: readonly string[] = [
  'dog',
  'cat',
  'horse',
  'parrot',
  'rabbit',
  'hamster',
  'pup',
  'puppy',
  'kitten',
];

const relationWords =
  '(best friend|friend|buddy|partner|spouse|wife|husband|girlfriend|boyfriend|fianc[eé]e?|sister|brother|mom|mum|mother|dad|father|son|daughter|kid|child|cousin|aunt|uncle|grandma|grandmother|grandpa|grandfather|boss|colleague|co-?worker|roommate|flatmate|neighbou?r|teammate|mentor|dog|cat|horse|parrot|rabbit|hamster|pup|puppy|kitten)';
const folded: Readonly<Record<string, string>> = {
  grandma: 'grandmother',
  grandpa: 'grandfather',
  fiancee: 'fiance',
  fiancée: 'fiance',
  fiancé: 'fiance',
};

/** The attribute key of a relation word as said ("best friend" → `best_friend`, "mom" → `mother`). */
export function relationKey(word: string): string {
  const key = toAttributeKey(word);
  return folded[key] ?? folded[word.toLowerCase()] ?? key;
}

// "my buddy Tomas", "my sister is called Ana", "my sister's name is Ana", "Tomas is my buddy".
const readPeople: FactRule = ({ text, match }) => {
  const drafts: FactDraft[] = [];
  const named = (relation: string, value: string, confidence: number, index: number): void => {
    drafts.push({ attribute: relationKey(relation), value, confidence, index });
  };
  eachCue(
    match,
    new RegExp(
      `\\bmy (?:new |old |little |big |older |younger |main )?${relationWords}(?:'s name is)?(?:\\s+(?:is|'s))?(?:\\s+(?:called|named))?\\s+`,
      'gi',
    ),
    (found, end) => {
      const name = captureName(text, match, end, 2);
      // "my daughter Sara's birthday": the name without the possessive.
      if (name !== undefined)
        named(
          found[1]!,
          name.value.replace(/['’]s$/, ''),
          found[0].includes('name') || found[0].includes('called') ? 0.9 : 0.85,
          found.index,
        );
    },
  );
  eachCue(
    match,
    new RegExp(`(\\p{Lu}[\\p{L}'-]+) is my (?:new |old |little |big |main )?${relationWords}\\b(?!['’]s)`, 'gu'),
    (found) => {
      if (!notNames.has(found[1]!.toLowerCase())) named(found[2]!, found[1]!, 0.8, found.index);
    },
  );
  return drafts;
};

/** People (and pets) the user names by their relation to them. */
export const peopleFactRules: readonly FactRule[] = [readPeople];

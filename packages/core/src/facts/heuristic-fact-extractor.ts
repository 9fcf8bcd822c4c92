import type { SummarySourceMessage } from '../messages/summary-source-message.js';
import type { Fact } from './fact.js';
import type { ExtractedFact, FactExtractionInput, FactExtractor } from './fact-extractor.js';
import type { FactDraft, FactRule, FactRuleInput } from './fact-rule.js';
import { identityFactRules } from './identity-fact-rules.js';
import { multilingualFactRules } from './multilingual-fact-rules.js';
import { normalizeFactValue } from './normalize-fact-value.js';
import { peopleFactRules, personRelations } from './people-fact-rules.js';
import { planFactRules } from './plan-fact-rules.js';
import { possessionFactRules } from './possession-fact-rules.js';
import { preferenceFactRules } from './preference-fact-rules.js';
import { readStatements, type Statement } from './read-statements.js';

// People are read first so that "my buddy Tomas …, his node is …" can resolve "his" in the same sentence.
const laterRules: readonly FactRule[] = [
  ...identityFactRules,
  ...preferenceFactRules,
  ...possessionFactRules,
  ...planFactRules,
  ...multilingualFactRules,
];
const people = new Set(personRelations);

interface Mention {
  readonly sentence: number;
  readonly index: number;
  readonly name: string;
}

/** What the extractor carries from message to message: facts known so far, by attribute. */
interface Known {
  readonly attributes: Set<string>;
  /** relation → names the user gave for it (`sister` → {"Ana"}). */
  readonly relations: Map<string, Set<string>>;
}

/**
 * The offline fact extractor (`heuristic@1`): no LLM. It reads only the user's messages, splits them
 * into sentences, drops questions, hypotheticals ("if", "would", "maybe", "thinking of") and other
 * people's words (quotes, "Tomas said …"), and matches English patterns — identity (name, age, job,
 * employer, home town, lives in, callsign, handle, node ids, e-mail, phone), standing preferences
 * (`prefers`), tastes (`likes`, `dislikes`), possessions (`owns`, `battery_capacity`), people by relation
 * (`buddy`, `partner`, `sister`, …), plans and dates (`plans`, `trip_date`, `<event>_date`) and
 * corrections ("no longer", "not anymore", "moved to …") — plus German, Spanish and French patterns
 * for name, home and tastes. Each fact keeps the sentence verbatim as `text` (in the user's language),
 * the extracted span as `value`, a snake_case `attribute`, `subject` `user` or the named person
 * ("Tomas lives in Bend" → subject `Tomas`), a confidence by pattern strength, and the message seq.
 * Deterministic: the same messages and known facts give the same facts, in message and sentence order.
 */
export class HeuristicFactExtractor implements FactExtractor {
  readonly id = 'heuristic@1';

  async extract(input: FactExtractionInput): Promise<ExtractedFact[]> {
    input.signal?.throwIfAborted();
    const known = knownFrom(input.knownFacts);
    return input.messages
      .filter((message) => message.role === 'user')
      .flatMap((message) => extractFromMessage(message, known));
  }
}

function knownFrom(facts: readonly Fact[]): Known {
  const known: Known = { attributes: new Set(), relations: new Map() };
  for (const fact of facts) if (fact.validTo === undefined && fact.subject === 'user') remember(known, fact);
  return known;
}

function remember(known: Known, fact: Pick<ExtractedFact, 'subject' | 'attribute' | 'value' | 'polarity'>): void {
  if (fact.subject !== 'user' || fact.polarity === 'negate') return;
  known.attributes.add(fact.attribute);
  if (!people.has(fact.attribute)) return;
  const names = known.relations.get(fact.attribute) ?? new Set<string>();
  names.add(fact.value);
  known.relations.set(fact.attribute, names);
}

function extractFromMessage(message: SummarySourceMessage, known: Known): ExtractedFact[] {
  const statements = readStatements(message.content);
  const mentions: Mention[] = [];
  const facts = new Map<string, ExtractedFact>();
  statements.forEach((statement, sentence) => {
    const input = ruleInput(statement, sentence, mentions, known);
    const first = peopleFactRules.flatMap((rule) => rule(input));
    for (const draft of first)
      if (people.has(draft.attribute)) mentions.push({ sentence, index: draft.index, name: draft.value });
    for (const draft of first) remember(known, toFact(draft, statement, message.seq));
    const rest = laterRules.flatMap((rule) => rule(input));
    for (const draft of rest)
      if (draft.subject !== undefined && draft.subject !== 'user')
        mentions.push({ sentence, index: draft.index, name: draft.subject });
    for (const draft of [...first, ...rest].sort((a, b) => a.index - b.index)) {
      const fact = toFact(draft, statement, message.seq);
      const key = `${fact.subject.toLowerCase()}\u0000${fact.attribute}\u0000${normalizeFactValue(fact.value)}\u0000${fact.polarity ?? 'assert'}`;
      const earlier = facts.get(key);
      // The same fact read by two patterns (or twice in one message) counts once, at the stronger confidence.
      if (earlier === undefined || earlier.confidence < fact.confidence)
        facts.set(key, earlier === undefined ? fact : { ...earlier, confidence: fact.confidence });
      remember(known, fact);
    }
  });
  return [...facts.values()];
}

function ruleInput(statement: Statement, sentence: number, mentions: readonly Mention[], known: Known): FactRuleInput {
  return {
    ...statement,
    personBefore(index) {
      const before = mentions.filter(
        (mention) => mention.sentence < sentence || (mention.sentence === sentence && mention.index < index),
      );
      return before.sort((a, b) => a.sentence - b.sentence || a.index - b.index).at(-1)?.name;
    },
    personCalled(relation) {
      const names = known.relations.get(relation);
      return names !== undefined && names.size === 1 ? [...names][0] : undefined;
    },
    knows: (attribute) => known.attributes.has(attribute),
    knownAttribute(key) {
      if (known.attributes.has(key)) return key;
      const longer = [...known.attributes].filter((attribute) => attribute.endsWith(`_${key}`));
      return longer.length === 1 ? longer[0] : undefined;
    },
  };
}

function toFact(draft: FactDraft, statement: Statement, seq: number): ExtractedFact {
  return {
    subject: draft.subject ?? 'user',
    attribute: draft.attribute,
    value: draft.value,
    text: statement.text,
    confidence: draft.confidence,
    sourceSeqs: [seq],
    ...(draft.polarity === 'negate' ? { polarity: 'negate' as const } : {}),
    ...(draft.replaces === true ? { replaces: true } : {}),
  };
}

import type { Statement } from './read-statements.js';

/** A fact one rule read from one sentence, before the extractor fills in text, source and defaults. */
export interface FactDraft {
  /** Default `user`. */
  readonly subject?: string;
  readonly attribute: string;
  readonly value: string;
  readonly confidence: number;
  readonly polarity?: 'assert' | 'negate';
  /** The user said the value changed ("switched to", "is now", "instead of"): it replaces the current ones, whatever the attribute. */
  readonly replaces?: boolean;
  /** Offset in the sentence where the statement starts: facts of one sentence keep their spoken order. */
  readonly index: number;
}

/** What a rule sees: the sentence and what is known around it. */
export interface FactRuleInput extends Statement {
  /** The person a pronoun ("his node", "she lives …") at `index` refers to: the last one named before it in this message. */
  personBefore(index: number): string | undefined;
  /** The one person the user calls their `relation` (`sister` → "Ana"), from this message or the stored facts. */
  personCalled(relation: string): string | undefined;
  /**
   * Whether the user has a current fact (or one read earlier in these messages) with this attribute. A
   * function, not a method: rules destructure it.
   */
  readonly knows: (attribute: string) => boolean;
  /**
   * The attribute the user already has for `key`: `key` itself, or the one known attribute that ends in
   * `_<key>` ("cloud budget" is the known `monthly_cloud_budget`); `undefined` when none or several.
   */
  knownAttribute(key: string): string | undefined;
}

/** One family of patterns: reads the facts it recognizes in a sentence. Pure and deterministic. */
export type FactRule = (input: FactRuleInput) => FactDraft[];

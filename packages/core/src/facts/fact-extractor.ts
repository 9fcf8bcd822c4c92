import type { SummarySourceMessage } from '../messages/summary-source-message.js';
import type { Fact } from './fact.js';

/** A fact as an extractor proposes it, before reconciliation with what is stored. */
export interface ExtractedFact {
  /** `user` for the speaker, else who or what it is about. */
  readonly subject: string;
  /** Normalized key (`name`, `home_town`, `likes`, `trip_date`, …); see `singleValuedAttributes`. */
  readonly attribute: string;
  readonly value: string;
  /** The statement in the user's own words and language. */
  readonly text: string;
  /** 0–1. */
  readonly confidence: number;
  /** Seqs of the messages it was read from. */
  readonly sourceSeqs: readonly number[];
  /** `negate` for "I don't like X anymore": ends a matching current fact instead of adding one. */
  readonly polarity?: 'assert' | 'negate';
  /** The user said the value changed: it supersedes the current values of the attribute even where it may have several. */
  readonly replaces?: boolean;
}

/** What an extractor reads: new messages of one conversation and the user's current facts (for context). */
export interface FactExtractionInput {
  readonly messages: readonly SummarySourceMessage[];
  readonly knownFacts: readonly Fact[];
  readonly signal?: AbortSignal;
}

/** Reads durable facts about the user out of messages. Failures are `MemoryError`s (`model_failed` for an LLM). */
export interface FactExtractor {
  readonly id: string;
  extract(input: FactExtractionInput): Promise<ExtractedFact[]>;
}

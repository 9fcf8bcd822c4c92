import type { SummarySourceMessage } from '../messages/summary-source-message.js';
import type { Entity, EntityInput } from './entity.js';

/** A relation as an extractor proposes it, between entity names (resolved to ids when stored). */
export interface ExtractedRelation {
  readonly subject: string;
  /** snake_case verb phrase: `uses_relay`, `lives_in`, `works_at`, `sister_of`. */
  readonly predicate: string;
  readonly object: string;
  readonly sourceSeqs: readonly number[];
}

/** Entities and relations read from messages. */
export interface ExtractedGraph {
  readonly entities: readonly EntityInput[];
  readonly relations: readonly ExtractedRelation[];
}

/** Reads entities and relations out of messages; `knownEntities` lets it reuse names and aliases. */
export interface GraphExtractor {
  readonly id: string;
  extract(input: {
    messages: readonly SummarySourceMessage[];
    knownEntities: readonly Entity[];
    signal?: AbortSignal;
  }): Promise<ExtractedGraph>;
}

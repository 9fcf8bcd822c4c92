/**
 * A durable fact about a user (or about someone or something the user talks about): what it says, in
 * the user's own words, where it came from, and when it was true. Facts are never hard-deleted by
 * reconciliation: a new value supersedes the old one (`validTo`, `supersededBy`).
 */
export interface Fact {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  /** Who or what the fact is about: `user` for the user, else an entity name (`Tomas`, `LARCH-RIDGE`). */
  readonly subject: string;
  /** Normalized attribute key, e.g. `name`, `home_town`, `likes`, `trip_date`, `owns`. */
  readonly attribute: string;
  /** The value, as said (`Hood River`, `21 June`, `3000 mAh battery`). */
  readonly value: string;
  /** The statement in the user's words and language, e.g. "I moved the trip to 21 June". */
  readonly text: string;
  /** 0–1: how sure the extractor was. */
  readonly confidence: number;
  /** ISO 8601: when it became true (the source message's time). */
  readonly validFrom: string;
  /** ISO 8601: when it stopped being true (superseded or retired); absent while current. */
  readonly validTo?: string;
  /** The fact that replaced this one. */
  readonly supersededBy?: string;
  /**
   * ISO 8601: when the fact expires. From then on it leaves current listings and every context, but it
   * stays in the fact's history (its `validTo` is not set: it was not superseded or retired).
   */
  readonly expiresAt?: string;
  /** Where it was said: conversation and message seqs. */
  readonly sourceConversationId?: string;
  readonly sourceSeqs: readonly number[];
  /** Extractor id (`heuristic@1`, `openai:gpt-4o-mini`, `api` for a fact put by hand). */
  readonly extractor: string;
  readonly createdAt: string;
}

/** A fact before the store gives it an id and an owner. */
export type NewFact = Omit<Fact, 'id' | 'tenantId' | 'userId' | 'validTo' | 'supersededBy'>;

/**
 * Which facts to list: current ones by default; those valid at `asOf`; or every version with
 * `includeHistory`. With `now` (ISO 8601), a current listing leaves out facts expired by then; a listing
 * `asOf` a time always leaves out those expired by that time.
 */
export interface FactQuery {
  readonly subject?: string;
  readonly attribute?: string;
  readonly asOf?: string;
  readonly includeHistory?: boolean;
  readonly now?: string;
}

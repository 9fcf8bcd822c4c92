/** Something the user talks about: a person, place, device, organisation, event… with its other names. */
export interface Entity {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly name: string;
  /** `person`, `place`, `organization`, `device`, `event`, `other`. */
  readonly type: string;
  readonly aliases: readonly string[];
  readonly description?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** An entity to insert or merge: matched to a stored one by name or alias, case-insensitively. */
export interface EntityInput {
  readonly name: string;
  readonly type: string;
  readonly aliases?: readonly string[];
  readonly description?: string;
}

/** A typed edge between two entities (`Maren —uses_relay→ LARCH-RIDGE`), valid over a time interval. */
export interface Relation {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly subjectId: string;
  readonly predicate: string;
  readonly objectId: string;
  readonly validFrom: string;
  readonly validTo?: string;
  readonly sourceConversationId?: string;
  readonly sourceSeqs: readonly number[];
  readonly createdAt: string;
}

/** A relation to insert; an identical current one (same subject, predicate, object) is not duplicated. */
export type RelationInput = Omit<Relation, 'id' | 'tenantId' | 'userId' | 'validTo' | 'createdAt'>;

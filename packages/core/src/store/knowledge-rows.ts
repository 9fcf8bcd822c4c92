import type { Fact } from '../facts/fact.js';
import type { Entity, Relation } from '../graph/entity.js';

/**
 * The columns of the facts, entities and relations tables as every SQL adapter names them. Times,
 * numbers and JSON arrive in the driver's own types (epoch ms, `Date`, text or parsed JSON), so they
 * are `unknown` here and converted by the adapter's `toIso` and by {@link fromJsonColumn}.
 */
export interface FactRow {
  readonly id: string;
  readonly tenant_id: string;
  readonly user_id: string;
  readonly subject: string;
  readonly attribute: string;
  readonly value: string;
  readonly text: string;
  readonly confidence: unknown;
  readonly valid_from: unknown;
  readonly valid_to: unknown;
  readonly superseded_by: string | null;
  readonly source_conversation_id: string | null;
  readonly source_seqs: unknown;
  readonly extractor: string;
  readonly created_at: unknown;
  readonly expires_at: unknown;
}

/** An `entities` row; see {@link FactRow}. */
export interface EntityRow {
  readonly id: string;
  readonly tenant_id: string;
  readonly user_id: string;
  readonly name: string;
  readonly type: string;
  readonly aliases: unknown;
  readonly description: string | null;
  readonly created_at: unknown;
  readonly updated_at: unknown;
}

/** A `relations` row; see {@link FactRow}. */
export interface RelationRow {
  readonly id: string;
  readonly tenant_id: string;
  readonly user_id: string;
  readonly subject_id: string;
  readonly predicate: string;
  readonly object_id: string;
  readonly valid_from: unknown;
  readonly valid_to: unknown;
  readonly source_conversation_id: string | null;
  readonly source_seqs: unknown;
  readonly created_at: unknown;
}

/** Converts a driver's time value (epoch ms, `Date`, text) to ISO 8601. */
export type ToIsoTime = (value: unknown) => string;

/** A JSON column as its value: parsed by the driver already, or parsed here when it came back as text. */
export function fromJsonColumn<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/** Maps a `facts` row to a {@link Fact} (NULL columns become absent fields). */
export function factFromRow(row: FactRow, toIso: ToIsoTime): Fact {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    userId: row.user_id,
    subject: row.subject,
    attribute: row.attribute,
    value: row.value,
    text: row.text,
    confidence: Number(row.confidence),
    validFrom: toIso(row.valid_from),
    ...(row.valid_to === null || row.valid_to === undefined ? {} : { validTo: toIso(row.valid_to) }),
    ...(row.superseded_by === null ? {} : { supersededBy: row.superseded_by }),
    ...(row.source_conversation_id === null ? {} : { sourceConversationId: row.source_conversation_id }),
    sourceSeqs: fromJsonColumn<number[]>(row.source_seqs),
    extractor: row.extractor,
    createdAt: toIso(row.created_at),
    ...(row.expires_at === null || row.expires_at === undefined ? {} : { expiresAt: toIso(row.expires_at) }),
  };
}

/** Maps an `entities` row to an {@link Entity}. */
export function entityFromRow(row: EntityRow, toIso: ToIsoTime): Entity {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    userId: row.user_id,
    name: row.name,
    type: row.type,
    aliases: fromJsonColumn<string[]>(row.aliases),
    ...(row.description === null ? {} : { description: row.description }),
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
}

/** Maps a `relations` row to a {@link Relation}. */
export function relationFromRow(row: RelationRow, toIso: ToIsoTime): Relation {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    userId: row.user_id,
    subjectId: row.subject_id,
    predicate: row.predicate,
    objectId: row.object_id,
    validFrom: toIso(row.valid_from),
    ...(row.valid_to === null || row.valid_to === undefined ? {} : { validTo: toIso(row.valid_to) }),
    ...(row.source_conversation_id === null ? {} : { sourceConversationId: row.source_conversation_id }),
    sourceSeqs: fromJsonColumn<number[]>(row.source_seqs),
    createdAt: toIso(row.created_at),
  };
}

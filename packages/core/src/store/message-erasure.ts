import { MemoryError } from '../errors/memory-error.js';
import { factLine } from '../facts/fact-line.js';
import type { Fact } from '../facts/fact.js';
import type { Entity, Relation } from '../graph/entity.js';
import { namesOf } from '../graph/entity-rules.js';

/**
 * Which of a user's messages to erase: one conversation (`conversationId`) or all of the user's, and
 * within them a seq range (inclusive; only with a `conversationId`), the messages created before a
 * time, or both (a message must match every bound given). At least one bound is required: a whole
 * conversation or user is erased with `deleteConversation` / `deleteUser`.
 */
export interface MessageSelection {
  readonly conversationId?: string;
  /** First seq to erase, inclusive. */
  readonly fromSeq?: number;
  /** Last seq to erase, inclusive. */
  readonly toSeq?: number;
  /** ISO 8601: only messages created strictly before this time. */
  readonly before?: string;
}

/** What an erasure removed or changed, per kind; never any of the content. */
export interface ErasureCounts {
  /** Messages removed. */
  readonly messages: number;
  /** Conversations that lost at least one message. */
  readonly conversations: number;
  /** Vectors removed (every model's). */
  readonly vectors: number;
  /** Summaries removed because they covered an erased message (the conversation's compaction re-derives them). */
  readonly summaries: number;
  /** Facts removed because every message they came from was erased. */
  readonly facts: number;
  /** Facts kept because other messages state them too; they lose the erased sources. */
  readonly factsKept: number;
  /** Relations removed because every message they came from was erased. */
  readonly relations: number;
  /** Entities removed because only removed relations named them. */
  readonly entities: number;
  /** Memory files deleted or edited because an erased message's memory-tool call wrote them. */
  readonly memoryFiles: number;
}

/** The erasure's receipt: the counts and the id of its audit entry. */
export interface ErasureReceipt extends ErasureCounts {
  readonly auditId: string;
}

/** One erasure as the audit log keeps it: who, which selection, when, the counts; no content. */
export interface ErasureAuditEntry extends ErasureCounts {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly selection: MessageSelection;
  /** ISO 8601. */
  readonly erasedAt: string;
}

/** Options of `Store.eraseMessages`: the time written into the audit entry, and counts of work done before the call (memory files). */
export interface EraseMessagesOptions {
  readonly now: string;
  readonly memoryFiles?: number;
}

/** Checks a selection: `invalid_input` for bad bounds, a seq range without a conversation, or no bound at all. */
export function checkMessageSelection(selection: MessageSelection): MessageSelection {
  const { conversationId, fromSeq, toSeq, before } = selection;
  if (conversationId !== undefined && (typeof conversationId !== 'string' || conversationId.length === 0)) {
    throw new MemoryError('invalid_input', 'conversationId must be a non-empty string', {
      details: { field: 'conversationId' },
    });
  }
  for (const [field, seq] of [
    ['fromSeq', fromSeq],
    ['toSeq', toSeq],
  ] as const) {
    if (seq !== undefined && (!Number.isSafeInteger(seq) || seq < 1)) {
      throw new MemoryError('invalid_input', `${field} must be a positive integer seq`, { details: { field } });
    }
  }
  if ((fromSeq !== undefined || toSeq !== undefined) && conversationId === undefined) {
    throw new MemoryError('invalid_input', 'a seq range needs a conversationId', {
      details: { field: 'conversationId' },
    });
  }
  if (fromSeq !== undefined && toSeq !== undefined && fromSeq > toSeq) {
    throw new MemoryError('invalid_input', 'fromSeq must not be after toSeq', { details: { field: 'fromSeq' } });
  }
  if (before !== undefined && (typeof before !== 'string' || Number.isNaN(Date.parse(before)))) {
    throw new MemoryError('invalid_input', 'before must be an ISO 8601 time', { details: { field: 'before' } });
  }
  if (fromSeq === undefined && toSeq === undefined && before === undefined) {
    throw new MemoryError(
      'invalid_input',
      'an erasure of messages needs fromSeq/toSeq or before; erase a whole conversation or user instead',
      {
        details: { field: 'fromSeq' },
      },
    );
  }
  return Object.freeze({
    ...(conversationId === undefined ? {} : { conversationId }),
    ...(fromSeq === undefined ? {} : { fromSeq }),
    ...(toSeq === undefined ? {} : { toSeq }),
    ...(before === undefined ? {} : { before: new Date(before).toISOString() }),
  });
}

/** The erased seqs of each conversation, as a store collected them. */
export type ErasedSeqs = ReadonlyMap<string, ReadonlySet<number>>;

/** What {@link planKnowledgeErasure} tells a store to do to the user's facts, relations and entities. */
export interface KnowledgeErasurePlan {
  readonly deleteFactIds: readonly string[];
  /** Facts kept with fewer sources (and a text of their own that no erased message could have worded). */
  readonly updateFacts: readonly {
    readonly id: string;
    readonly sourceSeqs: readonly number[];
    readonly text: string;
  }[];
  /** Facts a removed fact had superseded: they take over its successor link and end (current again when it was current). */
  readonly relinkFacts: readonly {
    readonly id: string;
    readonly supersededBy: string | undefined;
    readonly validTo: string | undefined;
  }[];
  readonly deleteRelationIds: readonly string[];
  readonly updateRelations: readonly { readonly id: string; readonly sourceSeqs: readonly number[] }[];
  readonly deleteEntityIds: readonly string[];
  /**
   * Entities kept so far that have a name or alias an erased message said; the store finds which of
   * those names no stored message of the user mentions any more and settles them with {@link settleEntityNames}.
   */
  readonly namedEntities: readonly NamedEntity[];
}

/** An entity a name of which an erased message said: its names (lower-case) and whether a kept relation names it. */
export interface NamedEntity {
  readonly entity: Entity;
  readonly names: readonly string[];
  readonly related: boolean;
}

/** What to do to entities whose names only erased messages said. */
export interface EntityNameEdits {
  readonly deleteEntityIds: readonly string[];
  /** Entities kept without the names only erased messages said (their `entity_names` rows go too). */
  readonly updates: readonly {
    readonly id: string;
    readonly aliases: readonly string[];
    readonly description: string | undefined;
    readonly removedNames: readonly string[];
  }[];
}

/**
 * Settles the entities of {@link KnowledgeErasurePlan.namedEntities} given the names no stored message
 * mentions any more: an entity whose own name is among them and that no kept relation names is removed;
 * otherwise it loses those aliases, and its description when that holds one of them.
 */
export function settleEntityNames(named: readonly NamedEntity[], unmentioned: ReadonlySet<string>): EntityNameEdits {
  const deleteEntityIds: string[] = [];
  const updates: {
    id: string;
    aliases: readonly string[];
    description: string | undefined;
    removedNames: readonly string[];
  }[] = [];
  for (const { entity, names, related } of named) {
    const removedNames = names.filter((name) => unmentioned.has(name));
    if (removedNames.length === 0) continue;
    if (unmentioned.has(entity.name.trim().toLowerCase()) && !related) {
      deleteEntityIds.push(entity.id);
      continue;
    }
    const aliases = (entity.aliases ?? []).filter((alias) => !unmentioned.has(alias.trim().toLowerCase()));
    const description =
      entity.description !== undefined && removedNames.some((name) => entity.description!.toLowerCase().includes(name))
        ? undefined
        : entity.description;
    updates.push({
      id: entity.id,
      aliases,
      description,
      removedNames: removedNames.filter((name) => name !== entity.name.trim().toLowerCase()),
    });
  }
  return { deleteEntityIds, updates };
}

/**
 * Decides, from every fact and relation of one user (history included) and the erased seqs, what goes:
 * a fact or relation whose every source message was erased is removed; one with other sources keeps
 * them (a kept fact's text becomes its `attribute: value` line, since the erased message may have
 * worded it); a fact the removed one had superseded takes back its place in the chain; an entity
 * named only by removed relations is removed. Facts without a source conversation (put by hand) stay.
 */
export function planKnowledgeErasure(
  facts: readonly Fact[],
  relations: readonly Relation[],
  erased: ErasedSeqs,
  graph: { readonly entities: readonly Entity[]; readonly erasedTexts: readonly string[] } = {
    entities: [],
    erasedTexts: [],
  },
): KnowledgeErasurePlan {
  const sourcesLeft = (conversationId: string | undefined, seqs: readonly number[]): readonly number[] | undefined => {
    const gone = conversationId === undefined ? undefined : erased.get(conversationId);
    if (gone === undefined || !seqs.some((seq) => gone.has(seq))) return undefined;
    return seqs.filter((seq) => !gone.has(seq));
  };
  const deleteFactIds: string[] = [];
  const updateFacts: { id: string; sourceSeqs: readonly number[]; text: string }[] = [];
  for (const fact of facts) {
    const left = sourcesLeft(fact.sourceConversationId, fact.sourceSeqs);
    if (left === undefined) continue;
    if (left.length === 0) deleteFactIds.push(fact.id);
    else updateFacts.push({ id: fact.id, sourceSeqs: left, text: factLine(fact) });
  }
  const removed = new Set(deleteFactIds);
  const byId = new Map(facts.map((fact) => [fact.id, fact]));
  const relinkFacts: { id: string; supersededBy: string | undefined; validTo: string | undefined }[] = [];
  for (const fact of facts) {
    if (removed.has(fact.id) || fact.supersededBy === undefined || !removed.has(fact.supersededBy)) continue;
    // Walk past every removed successor: the first kept one takes the link; none means current again.
    let successor: Fact | undefined = byId.get(fact.supersededBy);
    while (successor !== undefined && removed.has(successor.id))
      successor = successor.supersededBy === undefined ? undefined : byId.get(successor.supersededBy);
    relinkFacts.push({
      id: fact.id,
      supersededBy: successor?.id,
      validTo: successor === undefined ? undefined : successor.validFrom,
    });
  }
  const deleteRelationIds: string[] = [];
  const updateRelations: { id: string; sourceSeqs: readonly number[] }[] = [];
  const touchedEntities = new Set<string>();
  for (const relation of relations) {
    const left = sourcesLeft(relation.sourceConversationId, relation.sourceSeqs);
    if (left === undefined) continue;
    if (left.length > 0) {
      updateRelations.push({ id: relation.id, sourceSeqs: left });
      continue;
    }
    deleteRelationIds.push(relation.id);
    touchedEntities.add(relation.subjectId).add(relation.objectId);
  }
  const gone = new Set(deleteRelationIds);
  const stillNamed = new Set(
    relations
      .filter((relation) => !gone.has(relation.id))
      .flatMap((relation) => [relation.subjectId, relation.objectId]),
  );
  const deleteEntityIds = [...touchedEntities].filter((id) => !stillNamed.has(id));
  const deleted = new Set(deleteEntityIds);
  const said = graph.erasedTexts.join('\n').toLowerCase();
  const namedEntities = graph.entities
    .filter((entity) => !deleted.has(entity.id))
    .map((entity) => ({
      entity,
      names: namesOf(entity).filter((name) => name.length > 0 && said.includes(name)),
      related: stillNamed.has(entity.id),
    }))
    .filter(({ names }) => names.length > 0);
  return {
    deleteFactIds,
    updateFacts,
    relinkFacts,
    deleteRelationIds,
    updateRelations,
    deleteEntityIds,
    namedEntities,
  };
}

/** The source seqs of stored facts and relations that name messages no longer stored: `conflict` so a job that read them loses its write. */
export function erasedSourceConflict(
  kind: 'fact' | 'relation',
  conversationId: string,
  seqs: readonly number[],
): MemoryError {
  return new MemoryError(
    'conflict',
    `the ${kind}'s source messages ${seqs.join(', ')} of conversation ${conversationId} are not stored (erased)`,
    {
      details: { conversationId, erased: true },
    },
  );
}

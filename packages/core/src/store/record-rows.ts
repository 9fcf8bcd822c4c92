import { conversationFromRow, messageFromRow, type ConversationRow, type MessageRow } from './message-rows.js';
import {
  entityFromRow,
  factFromRow,
  relationFromRow,
  type EntityRow,
  type FactRow,
  type RelationRow,
  type ToIsoTime,
} from './knowledge-rows.js';
import { memoryFileFromRow, type MemoryFileRow } from './file-rows.js';
import { summaryFromRow, type SummaryRow } from './summary-rows.js';
import { countRecords, emptyRecordCounts, type StoreRecord, type StoreRecordTable } from './store-records.js';
import { parseStoredTime } from './stored-values.js';
import type { UsageKind } from '../usage/usage.js';

/** How a column's value travels: SQLite keeps times as epoch ms and JSON as text, PostgreSQL as timestamptz and json(b). */
export type RecordColumnKind = 'text' | 'integer' | 'real' | 'time' | 'json';

/** A column both SQL stores have under the same name. */
export interface RecordColumn {
  readonly name: string;
  readonly kind: RecordColumnKind;
}

/** A value on its way into a SQL store: text (times as ISO 8601, JSON as its text), a number, or null. */
export type RecordValue = string | number | null;

/**
 * One table of `Store.exportRecords` as both SQL adapters read and write it: its columns, the order that
 * pages through it as written (`position`: the store's insertion counter, SQLite `rowid`, PostgreSQL
 * `position`, which an import assigns afresh in the same order; otherwise the key columns), and the
 * mappings between a row and a record (through the row mappers of messages, summaries, facts, …).
 */
export interface RecordTable {
  readonly name: Exclude<StoreRecordTable, 'entity_names'>;
  readonly kind: StoreRecord['kind'];
  readonly columns: readonly RecordColumn[];
  readonly order: 'position' | readonly string[];
  /** A row (every column of `columns`, driver types) as its record; entities come without names (the adapter adds them). */
  fromRow(row: Record<string, unknown>, toIso: ToIsoTime): StoreRecord;
  /** A record of this table as the values of `columns`, in order. */
  toValues(record: StoreRecord): RecordValue[];
}

const column =
  (kind: RecordColumnKind) =>
  (name: string): RecordColumn => ({ name, kind });
const [text, integer, real, time, json] = (['text', 'integer', 'real', 'time', 'json'] as const).map(column) as [
  (name: string) => RecordColumn,
  (name: string) => RecordColumn,
  (name: string) => RecordColumn,
  (name: string) => RecordColumn,
  (name: string) => RecordColumn,
];
const userKey = [text('tenant_id'), text('user_id')];
const conversationKey = [...userKey, text('conversation_id')];
const keyOrder = ['tenant_id', 'user_id', 'conversation_id'];
const jsonText = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));
const scopeOf = (row: Record<string, unknown>) => ({
  tenantId: String(row.tenant_id),
  userId: String(row.user_id),
  conversationId: String(row.conversation_id),
});
const scopeValues = (scope: { tenantId: string; userId: string; conversationId: string }): RecordValue[] => [
  scope.tenantId,
  scope.userId,
  scope.conversationId,
];

function table<K extends StoreRecord['kind']>(spec: {
  name: RecordTable['name'];
  kind: K;
  columns: readonly RecordColumn[];
  order: RecordTable['order'];
  fromRow: (row: Record<string, unknown>, toIso: ToIsoTime) => Extract<StoreRecord, { kind: K }>;
  toValues: (record: Extract<StoreRecord, { kind: K }>) => RecordValue[];
}): RecordTable {
  return Object.freeze({
    ...spec,
    toValues: (record: StoreRecord) => spec.toValues(record as Extract<StoreRecord, { kind: K }>),
  });
}

/** Every table of an export, parents first, in the order of `storeRecordTables` (entity names travel on the entity records). */
export const recordTables: readonly RecordTable[] = Object.freeze([
  table({
    name: 'conversations',
    kind: 'conversation',
    columns: [
      ...conversationKey,
      time('created_at'),
      time('updated_at'),
      integer('message_count'),
      integer('total_tokens'),
      integer('summarized_through_seq'),
      integer('summarized_tokens'),
      json('metadata'),
    ],
    order: keyOrder,
    fromRow: (row, toIso) => ({
      kind: 'conversation',
      conversation: conversationFromRow(row as unknown as ConversationRow, toIso),
    }),
    toValues: ({ conversation: c }) => [
      ...scopeValues(c),
      c.createdAt,
      c.updatedAt,
      c.messageCount,
      c.totalTokens,
      c.summarizedThroughSeq,
      c.summarizedTokens,
      jsonText(c.metadata),
    ],
  }),
  table({
    name: 'messages',
    kind: 'message',
    columns: [
      ...conversationKey,
      integer('seq'),
      text('id'),
      text('role'),
      text('content'),
      text('name'),
      json('tool_calls'),
      text('tool_call_id'),
      time('created_at'),
      json('metadata'),
      integer('tokens'),
      text('idempotency_key'),
    ],
    order: [...keyOrder, 'seq'],
    fromRow: (row, toIso) => ({
      kind: 'message',
      scope: scopeOf(row),
      message: messageFromRow(row as unknown as MessageRow, toIso),
    }),
    toValues: ({ scope, message: m }) => [
      ...scopeValues(scope),
      m.seq,
      m.id,
      m.role,
      m.content,
      m.name ?? null,
      jsonText(m.toolCalls),
      m.toolCallId ?? null,
      m.createdAt,
      jsonText(m.metadata),
      m.tokens,
      m.idempotencyKey ?? null,
    ],
  }),
  table({
    name: 'usage',
    kind: 'usage',
    columns: [
      ...conversationKey,
      text('kind'),
      text('policy'),
      integer('sent_tokens'),
      integer('full_history_tokens'),
      integer('input_tokens'),
      integer('output_tokens'),
      time('created_at'),
    ],
    order: 'position',
    fromRow: (row, toIso) => ({
      kind: 'usage',
      scope: scopeOf(row),
      usage: {
        kind: row.kind as UsageKind,
        policy: String(row.policy),
        sentTokens: Number(row.sent_tokens),
        fullHistoryTokens: Number(row.full_history_tokens),
        inputTokens: Number(row.input_tokens),
        outputTokens: Number(row.output_tokens),
        createdAt: toIso(row.created_at),
      },
    }),
    toValues: ({ scope, usage: u }) => [
      ...scopeValues(scope),
      u.kind,
      u.policy,
      u.sentTokens,
      u.fullHistoryTokens,
      u.inputTokens ?? 0,
      u.outputTokens ?? 0,
      u.createdAt,
    ],
  }),
  table({
    name: 'summaries',
    kind: 'summary',
    columns: [
      ...conversationKey,
      text('id'),
      integer('level'),
      integer('from_seq'),
      integer('to_seq'),
      text('content'),
      integer('tokens'),
      json('folded_summary_ids'),
      text('summarizer'),
      integer('input_tokens'),
      integer('output_tokens'),
      text('fallback_reason'),
      time('created_at'),
    ],
    order: 'position',
    fromRow: (row, toIso) => ({ kind: 'summary', summary: summaryFromRow(row as unknown as SummaryRow, toIso) }),
    toValues: ({ summary: s }) => [
      ...scopeValues(s),
      s.id,
      s.level,
      s.fromSeq,
      s.toSeq,
      s.content,
      s.tokens,
      JSON.stringify(s.foldedSummaryIds),
      s.summarizer,
      s.inputTokens,
      s.outputTokens,
      s.fallbackReason ?? null,
      s.createdAt,
    ],
  }),
  table({
    name: 'cursors',
    kind: 'cursor',
    columns: [...conversationKey, text('name'), integer('position')],
    order: [...keyOrder, 'name'],
    fromRow: (row) => ({ kind: 'cursor', scope: scopeOf(row), name: String(row.name), position: Number(row.position) }),
    toValues: ({ scope, name, position }) => [...scopeValues(scope), name, position],
  }),
  table({
    name: 'facts',
    kind: 'fact',
    columns: [
      ...userKey,
      text('id'),
      text('subject'),
      text('attribute'),
      text('value'),
      text('text'),
      real('confidence'),
      time('valid_from'),
      time('valid_to'),
      text('superseded_by'),
      text('source_conversation_id'),
      json('source_seqs'),
      text('extractor'),
      time('created_at'),
      time('expires_at'),
    ],
    order: 'position',
    fromRow: (row, toIso) => ({ kind: 'fact', fact: factFromRow(row as unknown as FactRow, toIso) }),
    toValues: ({ fact: f }) => [
      f.tenantId,
      f.userId,
      f.id,
      f.subject,
      f.attribute,
      f.value,
      f.text,
      f.confidence,
      f.validFrom,
      f.validTo ?? null,
      f.supersededBy ?? null,
      f.sourceConversationId ?? null,
      JSON.stringify(f.sourceSeqs),
      f.extractor,
      f.createdAt,
      f.expiresAt ?? null,
    ],
  }),
  table({
    name: 'entities',
    kind: 'entity',
    columns: [
      ...userKey,
      text('id'),
      text('name'),
      text('type'),
      json('aliases'),
      text('description'),
      time('created_at'),
      time('updated_at'),
    ],
    order: 'position',
    fromRow: (row, toIso) => ({ kind: 'entity', entity: entityFromRow(row as unknown as EntityRow, toIso), names: [] }),
    toValues: ({ entity: e }) => [
      e.tenantId,
      e.userId,
      e.id,
      e.name,
      e.type,
      JSON.stringify(e.aliases),
      e.description ?? null,
      e.createdAt,
      e.updatedAt,
    ],
  }),
  table({
    name: 'relations',
    kind: 'relation',
    columns: [
      ...userKey,
      text('id'),
      text('subject_id'),
      text('predicate'),
      text('object_id'),
      time('valid_from'),
      time('valid_to'),
      text('source_conversation_id'),
      json('source_seqs'),
      time('created_at'),
    ],
    order: 'position',
    fromRow: (row, toIso) => ({ kind: 'relation', relation: relationFromRow(row as unknown as RelationRow, toIso) }),
    toValues: ({ relation: r }) => [
      r.tenantId,
      r.userId,
      r.id,
      r.subjectId,
      r.predicate,
      r.objectId,
      r.validFrom,
      r.validTo ?? null,
      r.sourceConversationId ?? null,
      JSON.stringify(r.sourceSeqs),
      r.createdAt,
    ],
  }),
  table({
    name: 'memory_files',
    kind: 'memoryFile',
    columns: [...userKey, text('path'), text('content'), integer('version'), time('created_at'), time('updated_at')],
    order: ['tenant_id', 'user_id', 'path'],
    fromRow: (row, toIso) => ({ kind: 'memoryFile', file: memoryFileFromRow(row as unknown as MemoryFileRow, toIso) }),
    toValues: ({ file: f }) => [f.tenantId, f.userId, f.path, f.content, f.version, f.createdAt, f.updatedAt],
  }),
]);

/** The table a record goes to. */
export function recordTableOf(record: StoreRecord): RecordTable | undefined {
  return recordTables.find((candidate) => candidate.kind === record.kind);
}

/** The columns of the entity name index, whose rows travel as the entity records' `names`. */
export const entityNameColumns: readonly RecordColumn[] = Object.freeze([...userKey, text('name'), text('entity_id')]);

/** An entity record's name index rows, as the values of {@link entityNameColumns}. */
export function entityNameValues(record: Extract<StoreRecord, { kind: 'entity' }>): RecordValue[][] {
  return record.names.map((name) => [record.entity.tenantId, record.entity.userId, name, record.entity.id]);
}

/**
 * Checks a page of records before an import writes it: `invalid_input` for a record of no known kind or a
 * time that is not ISO 8601 (naming the column), so every store refuses the same records.
 */
export function checkRecords(records: readonly StoreRecord[]): void {
  countRecords(emptyRecordCounts(), records);
  for (const record of records) {
    const table = recordTableOf(record)!;
    const values = table.toValues(record);
    table.columns.forEach((column, index) => {
      const value = values[index];
      if (column.kind === 'time' && value !== null && value !== undefined) parseStoredTime(column.name, String(value));
    });
  }
}

/** An `entity_names` row as both SQL adapters read it. */
export interface EntityNameRow {
  readonly tenant_id: string;
  readonly user_id: string;
  readonly entity_id: string;
  readonly name: string;
}

/** A page of entity records with the names each owns in the name index, from the index rows of those entities. */
export function withEntityNames(records: readonly StoreRecord[], rows: readonly EntityNameRow[]): StoreRecord[] {
  return records.map((record) => {
    if (record.kind !== 'entity') return record;
    const { tenantId, userId, id } = record.entity;
    const names = rows
      .filter((row) => row.entity_id === id && row.tenant_id === tenantId && row.user_id === userId)
      .map((row) => row.name);
    // In code-unit order, the same in every store whatever its collation.
    return { ...record, names: names.sort() };
  });
}

/** The ids of a page's entity records, to read their names with. */
export function entityIdsOf(records: readonly StoreRecord[]): string[] {
  return records.flatMap((record) => (record.kind === 'entity' ? [record.entity.id] : []));
}

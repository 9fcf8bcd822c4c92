// @mnemo/core/store-kit: what an author of a Store adapter needs and an application does not. The
// port's own types are here too, so an adapter imports everything of the port from one entry.
export { checkSummaryRange } from '../compaction/summary-range.js';
export { toStorageError } from '../errors/memory-error.js';
export { checkStoredMemoryPath, memoryFileConflict } from '../files/memory-file-rules.js';
export { isWithinMemoryPath } from '../files/memory-file.js';
export { isFactVisible } from '../facts/fact-rules.js';
export { mergeEntity } from '../graph/entity-rules.js';
export { backlogFromRows } from '../jobs/job.js';
export { nextTurn } from '../jobs/next-turn.js';
export { checkConversationMetadata, toRoleCounts } from '../messages/conversation-metadata.js';
export { checkStorableMessage } from '../messages/check-storable-message.js';
export { idempotencyConflict, isSameMessage } from '../messages/same-message.js';
export { scopeKey } from '../messages/scope.js';
export { groupBy } from '../store/group-by.js';
export { conversationFromRow, messageColumns, messageFromRow } from '../store/message-rows.js';
export type { ConversationRow, MessageRow } from '../store/message-rows.js';
export { summaryColumns, summaryFromRow } from '../store/summary-rows.js';
export type { SummaryRow } from '../store/summary-rows.js';
export { jobColumns, jobFromRow, leaseLost } from '../store/job-rows.js';
export type { JobRow } from '../store/job-rows.js';
export { checkCount, parseStoredTime } from '../store/stored-values.js';
export { memoryFileFromRow, memoryFileInfoFromRow } from '../store/file-rows.js';
export type { MemoryFileRow } from '../store/file-rows.js';
export { entityFromRow, factFromRow, fromJsonColumn, relationFromRow } from '../store/knowledge-rows.js';
export type { EntityRow, FactRow, RelationRow, ToIsoTime } from '../store/knowledge-rows.js';
export {
  decodeConversationCursor,
  decodePositionCursor,
  defaultPageLimit,
  encodeConversationCursor,
  encodePositionCursor,
  resolvePageLimit,
} from '../store/page-cursor.js';
export type { ConversationCursor } from '../store/page-cursor.js';
export { toUsageTotals } from '../usage/usage.js';
export type { EmbeddingCount, MessageEmbedding, SearchHit, SearchOptions } from '../recall/search.js';
export { embeddingCounts } from '../recall/search.js';
export {
  ConversationNames,
  copyInto,
  KeywordPostings,
  KeywordRanker,
  keywordBm25,
  keywordScoreDecimals,
  slotFilter,
  wordFrequencies,
} from '../recall/keyword-postings.js';
export type { KeywordHit, KeywordRow, ScanFilter } from '../recall/keyword-postings.js';
export { UserCopies } from './user-copies.js';
export { binaryCandidates, codeWords, signCode, VectorCodes, VectorCodeScanner } from '../recall/vector-codes.js';
export type { CodeRow } from '../recall/vector-codes.js';
export type { CopyData, CopyPage, CopySource, UserCopiesOptions } from './user-copies.js';
export type { RoleCounts } from '../messages/conversation-metadata.js';
export type {
  CallOptions,
  Conversation,
  ConversationFilter,
  EraseResult,
  JobCompletion,
  JobFailure,
  JobLease,
  JobRequest,
  MemoryFileWrite,
  MessageRange,
  Page,
  PageOptions,
  ReadinessCheck,
  Store,
  StoreReadiness,
} from '../store/store.js';
export type { LeaseRequest } from '../jobs/job.js';
export { ComposedStore } from './composed-store.js';
export {
  checkMessageSelection,
  erasedSourceConflict,
  planKnowledgeErasure,
  settleEntityNames,
} from '../store/message-erasure.js';
export type { EntityNameEdits, ErasedSeqs, KnowledgeErasurePlan, NamedEntity } from '../store/message-erasure.js';
export { ByteBudgetCache } from '../store/byte-budget-cache.js';
export type { Awaitable, PortCalls, StorePart } from '../store/port.js';
export type { StoreComposition } from './composed-store.js';
export type { SummaryPort } from '../compaction/summary-port.js';
export type { FilePort } from '../files/file-port.js';
export type { JobPort } from '../jobs/job-port.js';
export type { KnowledgePort } from '../knowledge/knowledge-port.js';
export type { MessagePort } from '../messages/message-port.js';
export type { SearchPort } from '../recall/search-port.js';
export type { UsagePort } from '../usage/usage-port.js';
export type { ErasurePort } from '../store/erasure-port.js';
export type { TransferPort } from '../store/transfer-port.js';
export type { StoreLifecycle } from '../store/store.js';
export {
  countRecords,
  emptyRecordCounts,
  resolveExportPageSize,
  storeNotEmpty,
  storeRecordTables,
  tableOfRecord,
  totalRecordCount,
} from '../store/store-records.js';
export type {
  ExportRecordsOptions,
  ImportRecordsOptions,
  StoreRecord,
  StoreRecordCounts,
  StoreRecordTable,
} from '../store/store-records.js';
export { namesOf } from '../graph/entity-rules.js';
export {
  checkRecords,
  entityIdsOf,
  entityNameColumns,
  entityNameValues,
  recordTableOf,
  recordTables,
  withEntityNames,
} from '../store/record-rows.js';
export type { EntityNameRow, RecordColumn, RecordColumnKind, RecordTable, RecordValue } from '../store/record-rows.js';

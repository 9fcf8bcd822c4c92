/**
 * @mnemo/core/internals: the engine's parts that mnemo's own packages (the server, the CLI, the
 * adapters, the models, the benchmarks) share and a library user does not need. Not a stable API: a name
 * here may change or go in any release. What users need is in `@mnemo/core`; what a store adapter needs
 * is in `@mnemo/core/store-kit`.
 */
export { compactConversation } from './compaction/compact-conversation.js';
export { isCompactionDue } from './compaction/plan-compaction.js';
export { buildSummarizePrompt } from './compaction/summarize-prompt.js';
export type { NewSummary } from './compaction/summary.js';
export { assembleContext } from './context/assemble-context.js';
export { buildContext } from './context/build-context.js';
export type { ContextRequest } from './context/build-context.js';
export { builtInContextDefaults } from './context/context-options.js';
export { recalledBlockHeader } from './context/memory-blocks.js';
export type { NewFact } from './facts/fact.js';
export type { RelationInput } from './graph/entity.js';
export { monthNames } from './facts/find-dates.js';
export { normalizeFactValue, toAttributeKey } from './facts/normalize-fact-value.js';
export { consolidateFacts } from './facts/consolidate-facts.js';
export { cosineSimilarity, normalizeVector } from './recall/embedder.js';
export { backgroundJobAttempts } from './jobs/background-work.js';
export { embedConversation, embeddingText } from './jobs/embed-conversation.js';
export { defaultQueryEmbeddingTimeoutMs } from './engine/memory-options.js';
export {
  collectRecallCandidates,
  recall,
  recallTuning,
  refinerGapLimit,
  refinerGapWindow,
  refinerRanksConversation,
} from './recall/recall.js';
export {
  inVectorSpace,
  prepareRecallCandidates,
  rankPreparedCandidates,
  vectorSpaceOf,
} from './recall/rank-recall-candidates.js';
export type { PreparedCandidates, RecallCandidates } from './recall/rank-recall-candidates.js';
export { keywordTerms } from './recall/keyword-terms.js';
export { namesOf } from './graph/entity-rules.js';
export { readJobBacklog } from './jobs/job.js';
export { createJobWorker } from './jobs/job-worker.js';
export { createKeyedLock } from './jobs/keyed-lock.js';
export type { KeyedLock } from './jobs/keyed-lock.js';
export { checkToolSequence } from './messages/check-tool-sequence.js';
export { prepareMessages } from './messages/prepare-messages.js';
export { validateMessageInput } from './messages/validate-message.js';
export { supersedingMetadata, withoutSuperseded } from './messages/regenerated-replies.js';
export type { EraseMessagesOptions } from './store/message-erasure.js';
export { countRecords, emptyRecordCounts, storeRecordTables, tableOfRecord } from './store/store-records.js';
export type { StoreRecord, StoreRecordTable } from './store/store-records.js';
export { savedPercent } from './usage/usage.js';

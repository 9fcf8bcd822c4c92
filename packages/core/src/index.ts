export { compactConversation } from './compaction/compact-conversation.js';
export type { CompactionDependencies } from './compaction/compact-conversation.js';
export { cacheAwareMarks, compactionPresets, compactionSettingsForBudget, defaultCachedPriceRatio, defaultCompactionSettings, minCachedPrefixTokens, resolveCompactionSettings, type CompactionCostOptions, type FoldMarks } from './compaction/compaction-settings.js';
export type { CompactionSettings } from './compaction/compaction-settings.js';
export { createCompactor } from './compaction/create-compactor.js';
export type { Compactor, CompactorOptions } from './compaction/create-compactor.js';
export { ExtractiveSummarizer } from './compaction/extractive-summarizer.js';
export type { ExtractiveSummarizerOptions } from './compaction/extractive-summarizer.js';
export { isCompactionDue, planCompaction } from './compaction/plan-compaction.js';
export type { RawBacklog } from './compaction/plan-compaction.js';
export { compressSentence, isSmallTalk, scoreSentence } from './compaction/score-sentence.js';
export { buildSummarizePrompt } from './compaction/summarize-prompt.js';
export type { SummarizeInput, SummarizeResult, Summarizer } from './compaction/summarizer.js';
export type { NewSummary, Summary } from './compaction/summary.js';
export { assembleContext, describeDropped, pinnedTokens } from './context/assemble-context.js';
export { assembleHybrid, hybridShares } from './context/assemble-hybrid.js';
export type { HybridInput } from './context/assemble-hybrid.js';
export { factsBlock, recalledBlock } from './context/memory-blocks.js';
export type { ItemBlock } from './context/memory-blocks.js';
export type { AssembleInput } from './context/assemble-context.js';
export { buildContext, defaultRecallK } from './context/build-context.js';
export type { ContextDependencies, ContextRequest } from './context/build-context.js';
export { assertContextOptions, builtInContextDefaults, maxContextTokens, resolveContextDefaults } from './context/context-options.js';
export type { ContextDefaults, ContextOptions } from './context/context-options.js';
export { contextPolicies } from './context/context-types.js';
export type {
  BuiltContext,
  ContextItem,
  ContextMessage,
  ContextPart,
  ContextPolicy,
  ContextRecallReport,
  ContextStablePrefix,
  ContextReport,
  DroppedMessages,
  DropReason,
  ExcludedItem,
  SeqRange,
  TruncatedMessage,
} from './context/context-types.js';
export { groupMessages, groupTurns } from './context/group-messages.js';
export type { MessageGroup, Turn } from './context/group-messages.js';
export { minSummaryBlockTokens, summaryBlock } from './context/summary-block.js';
export type { SummaryBlock, SummaryInput } from './context/summary-block.js';
export { toOpenAiMessages } from './context/to-openai-messages.js';
export type { OpenAiChatMessage } from './context/to-openai-messages.js';
export { truncationMarker } from './context/truncate-group.js';
export type { Fact, FactQuery, NewFact } from './facts/fact.js';
export type { ExtractedFact, FactExtractionInput, FactExtractor } from './facts/fact-extractor.js';
export type { ExtractedGraph, ExtractedRelation, GraphExtractor } from './graph/graph-extractor.js';
export type { Entity, EntityInput, Relation, RelationInput } from './graph/entity.js';
export { extractKnowledge, knowledgeBatchSize, knowledgeCursorName } from './knowledge/extract-knowledge.js';
export type { KnowledgeDependencies, KnowledgeRunResult } from './knowledge/extract-knowledge.js';
export { findDates, normalizeDate } from './facts/find-dates.js';
export type { DateMention } from './facts/find-dates.js';
export { HeuristicFactExtractor } from './facts/heuristic-fact-extractor.js';
export { normalizeFactValue, toAttributeKey } from './facts/normalize-fact-value.js';
export { personRelations, petRelations } from './facts/people-fact-rules.js';
export { consolidateFacts } from './facts/consolidate-facts.js';
export type { ConsolidateOptions, FactConsolidation } from './facts/consolidate-facts.js';
export { correctFact, putFact } from './facts/put-fact.js';
export type { FactCorrection, FactInput } from './facts/put-fact.js';
export { reconcileFacts } from './facts/reconcile-facts.js';
export type { FactReconciliation, MessageTimes, ReconcileContext } from './facts/reconcile-facts.js';
export { isSingleValuedAttribute, singleValuedAttributes } from './facts/single-valued-attributes.js';
export { findEntity } from './graph/find-entity.js';
export { graphNeighbours, maxNeighbourDepth } from './graph/graph-neighbours.js';
export type { GraphNeighbourhood, GraphNeighboursOptions } from './graph/graph-neighbours.js';
export { HeuristicGraphExtractor } from './graph/heuristic-graph-extractor.js';
export { aliasPredicate, singleValuedPredicates, storeGraph, userEntityAlias } from './graph/store-graph.js';
export type { StoreGraphContext, StoredGraph } from './graph/store-graph.js';
export { cosineSimilarity, normalizeVector } from './recall/embedder.js';
export type { Embedder } from './recall/embedder.js';
export { embedBatchSize, embedConversation, embeddingText } from './recall/embed-conversation.js';
export { HashedEmbedder } from './recall/hashed-embedder.js';
export { defaultQueryEmbeddingTimeoutMs } from './engine/create-memory.js';
export { collectRecallCandidates, fuse, recall, recallTuning, searchRecall } from './recall/recall.js';
export type { FuseOptions, RecallDependencies, RecallExplanation, RecallHit, RecallOptions, RecallSearch } from './recall/recall.js';
export { checkRecallTuning, prepareRecallCandidates, rankPreparedCandidates, rankRecallCandidates } from './recall/rank-recall-candidates.js';
export type { PreparedCandidates, PreparedRanking, RecallCandidates, RecallTuning } from './recall/rank-recall-candidates.js';
export { keywordTerms, maxKeywordTerms } from './recall/keyword-terms.js';
export { namesOf } from './graph/entity-rules.js';
export { isHiddenMemoryPath, maxMemoryPathLength, memoryDirectoryMarker, memoryRoot, normalizeMemoryPath } from './files/memory-file.js';
export type { MemoryFile, MemoryFileInfo } from './files/memory-file.js';
export { createMemoryFileReader } from './files/memory-file-reader.js';
export type { MemoryFileReader } from './files/memory-file-reader.js';
export { createMemoryTool, defaultMemoryToolLimits } from './files/memory-tool.js';
export type { MemoryTool, MemoryToolDefinition, MemoryToolLimits, MemoryToolOptions } from './files/memory-tool.js';
export { memoryToolDescription, memoryToolInputSchema, memoryToolName, parseMemoryCommand } from './files/memory-tool-schema.js';
export type { JsonSchema, MemoryCommand } from './files/memory-tool-schema.js';
export { expandSummary } from './engine/expand-summary.js';
export type { ExpandedSummary } from './engine/expand-summary.js';
export { getConversationStats } from './engine/conversation-stats.js';
export type { ConversationStats } from './engine/conversation-stats.js';
export type { RetentionOptions, RetentionOutcome, RetentionPolicy, RetentionRules } from './engine/apply-retention.js';
export { createMemory } from './engine/create-memory.js';
export type { Memory, MemoryOptions } from './engine/create-memory.js';
export type { EraseTarget } from './messages/erase-target.js';
export { errorCodes, isMemoryError, MemoryError } from './errors/memory-error.js';
export type { ErrorCode, ErrorDetails } from './errors/memory-error.js';
export { jobKinds, readJobBacklog } from './jobs/job.js';
export type { Job, JobBacklog, JobBacklogStatus, JobCounts, JobKind, JobKindCount, JobStatus } from './jobs/job.js';
export { createJobWorker } from './jobs/job-worker.js';
export type { JobHandler, JobWorker, JobWorkerOptions } from './jobs/job-worker.js';
export type { JobTimeSlice } from './jobs/time-slice.js';
export { checkToolSequence, openToolCallIds } from './messages/check-tool-sequence.js';
export { messageRoles } from './messages/message.js';
export type { Message, MessageInput, MessageRole, Metadata, NewMessage, ToolCall } from './messages/message.js';
export { prepareMessages } from './messages/prepare-messages.js';
export { defaultTenantId, defaultUserId, maxIdLength, namedUserOf, ownerOf, resolveScope, resolveUserScope } from './messages/scope.js';
export { maxMetadataDepth } from './messages/copy-metadata.js';
export type { Scope, ScopeInput, UserNaming, UserScope, UserScopeInput } from './messages/scope.js';
export type { SummarySourceMessage } from './messages/summary-source-message.js';
export { defaultMessageLimits, validateMessageInput } from './messages/validate-message.js';
export type { MessageLimits } from './messages/validate-message.js';
export { reservedMetadataKey, supersededIds, supersedingMetadata, withoutSuperseded } from './messages/superseded-messages.js';
export { maxConversationMetadataChars } from './messages/conversation-metadata.js';
export type { RoleCounts } from './messages/conversation-metadata.js';
export { maxPageLimit } from './store/page-cursor.js';
export type { CallOptions, Conversation, EraseResult, MessageRange, Page, PageOptions, ReadinessCheck, Store, StoreReadiness } from './store/store.js';
export { checkMessageSelection } from './store/message-erasure.js';
export type { ErasureAuditEntry, ErasureCounts, ErasureReceipt, EraseMessagesOptions, MessageSelection } from './store/message-erasure.js';
export { countRecords, emptyRecordCounts, storeRecordTables, tableOfRecord } from './store/store-records.js';
export type { ExportRecordsOptions, ImportRecordsOptions, StoreRecord, StoreRecordCounts, StoreRecordTable } from './store/store-records.js';
export { createGptTokenCounter, encodingForModel } from './tokens/gpt-token-counter.js';
export type { GptEncodingName, GptTokenCounterOptions } from './tokens/gpt-token-counter.js';
export type { CountableMessage, TokenCounter } from './tokens/token-counter.js';
export { savedPercent, usageKinds } from './usage/usage.js';
export type { UsageEntry, UsageKind, UsageRecord, UsageTotals } from './usage/usage.js';

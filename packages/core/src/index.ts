/**
 * @mnemo/core: the engine as a library user sees it: `createMemory` and the `Memory` it returns, the
 * types of everything that API takes and gives, the ports a caller may implement (embedder, summarizer,
 * fact and graph extractors, token counter), errors, ids and the memory tool's definition. Adapters build
 * on `@mnemo/core/store-kit`; mnemo's own packages share the rest through `@mnemo/core/internals`.
 * `public-exports.test.ts` snapshots every entry's names, so growth is a reviewed change.
 */
export {
  compactionPresets,
  compactionSettingsForBudget,
  defaultCompactionSettings,
} from './compaction/compaction-settings.js';
export type { CompactionCostOptions, CompactionSettings } from './compaction/compaction-settings.js';
export { ExtractiveSummarizer } from './compaction/extractive-summarizer.js';
export type { ExtractiveSummarizerOptions } from './compaction/extractive-summarizer.js';
export type { SummarizeInput, Summarizer, SummarizeResult } from './compaction/summarizer.js';
export type { Summary } from './compaction/summary.js';
export { maxContextTokens } from './context/context-options.js';
export type { ContextDefaults, ContextOptions } from './context/context-options.js';
export { contextPolicies, recallModes } from './context/context-types.js';
export type {
  BuiltContext,
  ContextItem,
  ContextMessage,
  ContextPart,
  ContextPolicy,
  ContextRecallReport,
  ContextReport,
  ContextStablePrefix,
  DroppedMessages,
  DropReason,
  ExcludedItem,
  RecallMode,
  SeqRange,
  TruncatedMessage,
} from './context/context-types.js';
export { toOpenAiMessages } from './context/to-openai-messages.js';
export type { OpenAiChatMessage } from './context/to-openai-messages.js';
export type { Fact, FactQuery } from './facts/fact.js';
export type { ExtractedFact, FactExtractionInput, FactExtractor } from './facts/fact-extractor.js';
export type { ExtractedGraph, ExtractedRelation, GraphExtractor } from './graph/graph-extractor.js';
export type { Entity, EntityInput, Relation } from './graph/entity.js';
export type { ConsolidateOptions, FactConsolidation } from './facts/consolidate-facts.js';
export type { FactCorrection, FactInput } from './facts/put-fact.js';
export type { GraphNeighbourhood } from './graph/graph-neighbours.js';
export type { Embedder } from './recall/embedder.js';
export { HashedEmbedder } from './recall/hashed-embedder.js';
export type { RecallExplanation, RecallHit, RecallOptions, RecallSearch } from './recall/recall.js';
export type { RecallTuning } from './recall/rank-recall-candidates.js';
export type { MemoryFile, MemoryFileInfo } from './files/memory-file.js';
export type { MemoryFileReader } from './files/memory-file-reader.js';
export type { MemoryTool, MemoryToolDefinition, MemoryToolLimits } from './files/memory-tool.js';
export { memoryToolDescription, memoryToolInputSchema, memoryToolName } from './files/memory-tool-schema.js';
export type { JsonSchema } from './files/memory-tool-schema.js';
export type { ExpandedSummary } from './engine/expand-summary.js';
export type { ConversationStats } from './engine/conversation-stats.js';
export type { RetentionOptions, RetentionOutcome, RetentionPolicy, RetentionRules } from './engine/apply-retention.js';
export { createMemory } from './engine/create-memory.js';
export type { Memory } from './engine/memory.js';
export type { MemoryOptions } from './engine/memory-options.js';
export type { EraseTarget } from './messages/erase-target.js';
export { errorCodes, isMemoryError, MemoryError } from './errors/memory-error.js';
export type { ErrorCode, ErrorDetails } from './errors/memory-error.js';
export { jobKinds } from './jobs/job.js';
export type { Job, JobBacklog, JobBacklogStatus, JobCounts, JobKind, JobKindCount, JobStatus } from './jobs/job.js';
export { messageRoles } from './messages/message.js';
export type { Message, MessageInput, MessageRole, Metadata, NewMessage, ToolCall } from './messages/message.js';
export {
  defaultTenantId,
  defaultUserId,
  maxIdLength,
  namedUserOf,
  ownerOf,
  resolveScope,
  resolveUserScope,
} from './messages/scope.js';
export type { Scope, ScopeInput, UserNaming, UserScope, UserScopeInput } from './messages/scope.js';
export type { SummarySourceMessage } from './messages/summary-source-message.js';
export { defaultMessageLimits } from './messages/validate-message.js';
export type { MessageLimits } from './messages/validate-message.js';
export type { RoleCounts } from './messages/conversation-metadata.js';
export { maxPageLimit } from './store/page-cursor.js';
export type {
  CallOptions,
  Conversation,
  EraseResult,
  MessageRange,
  Page,
  PageOptions,
  ReadinessCheck,
  Store,
  StoreReadiness,
} from './store/store.js';
export type { ErasureAuditEntry, ErasureCounts, ErasureReceipt, MessageSelection } from './store/message-erasure.js';
export { createGptTokenCounter } from './tokens/gpt-token-counter.js';
export type { GptEncodingName, GptTokenCounterOptions } from './tokens/gpt-token-counter.js';
export type { CountableMessage, TokenCounter } from './tokens/token-counter.js';
export { usageKinds } from './usage/usage.js';
export type { UsageEntry, UsageKind, UsageRecord, UsageTotals } from './usage/usage.js';

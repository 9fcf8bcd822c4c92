// The entry a user of @mnemo/models needs: the embedders, the OpenAI-compatible summarizer, extractors and
// chat model, and their options. The extraction prompts and schemas are the extractors' own.
export { createOpenAiChatModel } from './chat/openai-chat-model.js';
export type {
  ChatCallOptions,
  ChatCompletion,
  ChatResponseFormat,
  ChatUsage,
  OpenAiChatModel,
  OpenAiChatModelOptions,
} from './chat/openai-chat-model.js';
export { OpenAiEmbedder } from './embedders/openai-embedder.js';
export type { OpenAiEmbedderOptions } from './embedders/openai-embedder.js';
export { OpenAiFactExtractor } from './extraction/openai-fact-extractor.js';
export { OpenAiGraphExtractor } from './extraction/openai-graph-extractor.js';
export { OpenAiSummarizer } from './chat/openai-summarizer.js';
export type { OpenAiSummarizerOptions } from './chat/openai-summarizer.js';
export type { InvalidOutputEvent, StructuredOutput, ValidationResult } from './extraction/request-validated-json.js';
export type { OpenAiExtractorOptions } from './extraction/resolve-extractor-options.js';
export { StaticEmbedder } from './embedders/static-embedder/static-embedder.js';
export type { StaticEmbedderOptions } from './embedders/static-embedder/static-embedder.js';
export { UseLiteEmbedder } from './embedders/use-lite-embedder.js';
export { UseLiteThreadEmbedder } from './embedders/use-lite-thread-embedder.js';
export type { UseLiteThreadEmbedderOptions } from './embedders/use-lite-thread-embedder.js';
export type { SentenceEncoder, UseLiteEmbedderOptions } from './embedders/use-lite-embedder.js';

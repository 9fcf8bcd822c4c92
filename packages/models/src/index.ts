export { createOpenAiChatModel } from './openai-chat-model.js';
export type { ChatCallOptions, ChatCompletion, ChatResponseFormat, ChatUsage, OpenAiChatModel, OpenAiChatModelOptions } from './openai-chat-model.js';
export { OpenAiSummarizer } from './openai-summarizer.js';
export type { OpenAiSummarizerOptions } from './openai-summarizer.js';
export { UseLiteEmbedder } from './use-lite-embedder.js';
export type { SentenceEncoder, UseLiteEmbedderOptions } from './use-lite-embedder.js';
export { OpenAiEmbedder } from './openai-embedder.js';
export type { OpenAiEmbedderOptions } from './openai-embedder.js';

export { createOpenAiChatModel } from './openai-chat-model.js';
export type { ChatCallOptions, ChatCompletion, ChatUsage, OpenAiChatModel, OpenAiChatModelOptions } from './openai-chat-model.js';
export { OpenAiSummarizer } from './openai-summarizer.js';
export type { OpenAiSummarizerOptions } from './openai-summarizer.js';

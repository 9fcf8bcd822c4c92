import type { OpenAiChatMessage } from '../context/to-openai-messages.js';
import type { SummarizeInput } from './summarizer.js';

/**
 * The chat prompt that asks an LLM for a rolling summary. The previous summary is always passed in, so
 * repeated compaction folds it instead of forgetting it. The offline summarizer counts this prompt's
 * tokens to report what an LLM compaction would have cost.
 */
export function buildSummarizePrompt(input: Pick<SummarizeInput, 'previousSummary' | 'messages' | 'maxSummaryTokens'>): OpenAiChatMessage[] {
  const maxWords = Math.max(20, Math.floor(input.maxSummaryTokens * 0.7));
  const instructions = [
    'You maintain the long-term memory of a conversation between a user and an assistant.',
    'Write an updated summary that merges the existing summary with the new messages.',
    'Keep every concrete fact a later turn may need: names, ids, numbers, amounts, dates and times, places,',
    'decisions, commitments, stated preferences and corrections (when a fact changed, keep only the new value',
    'and say it changed). Drop greetings, thanks and small talk. Do not invent anything.',
    'Write in the language the user writes in. Plain text, short sentences, no preamble.',
    `Stay under ${maxWords} words.`,
  ].join(' ');
  const transcript = input.messages
    .map((message) => `[${message.createdAt.slice(0, 16).replace('T', ' ')}] ${message.name ?? message.role}: ${message.content}`)
    .join('\n');
  const previous = input.previousSummary?.trim() ? input.previousSummary.trim() : '(none yet)';
  return [
    { role: 'system', content: instructions },
    { role: 'user', content: `Existing summary:\n${previous}\n\nNew messages:\n${transcript}\n\nUpdated summary:` },
  ];
}

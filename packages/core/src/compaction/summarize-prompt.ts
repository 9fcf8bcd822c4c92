import type { OpenAiChatMessage } from '../context/to-openai-messages.js';
import type { SummarizeInput } from './summarizer.js';

/**
 * The chat prompt that asks an LLM for a rolling summary. The previous summary is always passed in, so
 * repeated compaction folds it instead of forgetting it. The offline summarizer counts this prompt's
 * tokens to report what an LLM compaction would have cost.
 */
export function buildSummarizePrompt(
  input: Pick<SummarizeInput, 'previousSummary' | 'messages' | 'maxSummaryTokens' | 'keep' | 'drop'>,
): OpenAiChatMessage[] {
  const maxWords = Math.max(20, Math.floor(input.maxSummaryTokens * 0.7));
  // Kept short on purpose: this prompt is paid on every compaction, so each token here is paid again and again.
  const instructions = [
    'Update the long-term memory of a chat between a user and an assistant: merge the existing summary with the new messages.',
    'Keep every concrete fact a later turn may need: names, ids, numbers, amounts, dates, places, decisions, commitments and preferences.',
    'When a fact changed, keep only the new value. Drop greetings and small talk. Invent nothing.',
    `Write in the user's language, in short plain lines, under ${maxWords} words.`,
  ].join(' ');
  // The date once per day instead of a timestamp per line: short chat messages would pay more for the prefix than the text.
  const lines: string[] = [];
  let day = '';
  for (const message of input.messages) {
    const messageDay = message.createdAt.slice(0, 10);
    if (messageDay !== day) lines.push(`[${messageDay}]`);
    day = messageDay;
    lines.push(`${message.name ?? message.role}: ${message.content}`);
  }
  const transcript = lines.join('\n');
  const previous = input.previousSummary?.trim() ? input.previousSummary.trim() : '(none yet)';
  return [
    { role: 'system', content: instructions },
    {
      role: 'user',
      content: `Existing summary:\n${previous}\n\n${factSections(input, previous)}New messages:\n${transcript}\n\nUpdated summary:`,
    },
  ];
}

/**
 * The recorded facts for the LLM: those the existing summary does not carry yet, to keep as `- fact`
 * lines ahead of other material, and superseded ones it still carries, to leave out. Empty (the prompt
 * unchanged) when there are none; facts already in the summary are not repeated, since every token of
 * this prompt is paid on every compaction.
 */
function factSections(input: Pick<SummarizeInput, 'keep' | 'drop'>, previous: string): string {
  const known = previous.toLowerCase();
  const keep = (input.keep ?? []).filter((statement) => !known.includes(statement.text.toLowerCase()));
  const drop = (input.drop ?? []).filter((statement) => known.includes(statement.toLowerCase()));
  const sections: string[] = [];
  if (keep.length > 0)
    sections.push(
      `Recorded facts (keep each as a "- fact" line, before other material):\n${keep.map((statement) => `- ${statement.text}`).join('\n')}\n\n`,
    );
  if (drop.length > 0)
    sections.push(`No longer true (leave out):\n${drop.map((statement) => `- ${statement}`).join('\n')}\n\n`);
  return sections.join('');
}

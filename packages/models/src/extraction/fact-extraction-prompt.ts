import type { FactExtractionInput, OpenAiChatMessage } from '@mnemo/core';
import { renderPromptMessages } from './render-prompt-messages.js';

/** What {@link buildFactExtractionPrompt} renders: new messages and the user's facts so far. */
export type FactExtractionPromptInput = Pick<FactExtractionInput, 'messages' | 'knownFacts'>;

/** Most known facts shown; the newest current ones are kept, so the prompt stays bounded. */
export const maxPromptKnownFacts = 100;

const instructions = [
  'You read a conversation between a user and an assistant and write down durable facts about the user: facts that will still be true and useful in later conversations.',
  '',
  'Extract what the user states or clearly confirms about themselves and their life: identity (name, age, languages, home, job, employer),',
  'preferences, likes and dislikes, habits, health constraints (allergies, diet), possessions (devices, vehicles, pets),',
  'people in their life and how they relate (sister, manager, partner), and plans with dates (trips, appointments, deadlines).',
  'Facts about a person or thing the user talks about (their sister Ana, their radio) are facts too: give them that subject.',
  'Do not extract greetings, questions, requests to the assistant, hypotheticals, jokes, one-off moods ("I am tired today"),',
  'or anything only the assistant said. Do not invent or infer beyond what is said.',
  '',
  'Each fact:',
  '- subject: "user" for the user; otherwise the name of the person or thing, as the user calls it ("Ana", "the blue Honda").',
  '- attribute: a short English key in snake_case: name, age, home_town, lives_in, works_at, job_title, speaks, likes, dislikes,',
  '  prefers, allergic_to, owns, pet, sister, brother, partner, manager, birthday, trip_date, trip_destination, appointment, …',
  '  Reuse the attribute of a known fact when the new fact is about the same thing.',
  '- value: the value as the user said it, in the user\'s language ("Hood River", "21 June", "3000 mAh battery").',
  '- text: the fact as one short sentence in the user\'s own words and language, in the first person ("I moved the trip to 21 June").',
  '- confidence: from 0 to 1, how clearly the user said it (1 stated plainly, 0.5 implied).',
  '- sourceSeqs: the seq numbers of the messages it comes from, as shown in brackets ([seq 12]); only those seqs.',
  '- polarity: "assert" for a fact that is true now; "negate" when the user says a fact is no longer or not true',
  '  ("I don\'t eat meat anymore", "I sold my bike"): give the attribute and value of the fact that ended.',
  '',
  'Corrections: when the user changes a known fact ("actually the trip is on the 21st, not the 14th"), write the new value',
  'with polarity "assert" and the same attribute; the old one is replaced. Do not repeat known facts that did not change.',
  'Write every fact in the language the user writes in; only attribute keys are English.',
  '',
  'Answer with only a JSON object, no prose: {"facts": [{"subject": "user", "attribute": "likes", "value": "pizza",',
  '"text": "I love pizza", "confidence": 1, "sourceSeqs": [12], "polarity": "assert"}]}. Answer {"facts": []} when there is nothing to keep.',
].join('\n');

/**
 * The chat prompt that asks an LLM for facts: the instructions above (kinds of facts, snake_case
 * attributes, the user's language, corrections as `negate` or a new value, the JSON format) as the
 * system message, then the user's current known facts (at most {@link maxPromptKnownFacts}, newest first)
 * and the new messages, each with its seq, as the user message.
 */
export function buildFactExtractionPrompt(input: FactExtractionPromptInput): OpenAiChatMessage[] {
  const current = input.knownFacts
    .filter((fact) => fact.validTo === undefined)
    .toSorted((a, b) => b.validFrom.localeCompare(a.validFrom))
    .slice(0, maxPromptKnownFacts);
  const known =
    current.length === 0
      ? '(none yet)'
      : current.map((fact) => `- ${fact.subject} · ${fact.attribute}: ${fact.value}`).join('\n');
  return [
    { role: 'system', content: instructions },
    {
      role: 'user',
      content: `Known facts:\n${known}\n\nNew messages:\n${renderPromptMessages(input.messages)}\n\nFacts as JSON:`,
    },
  ];
}

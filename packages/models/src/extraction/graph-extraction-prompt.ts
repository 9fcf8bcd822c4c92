import type { Entity, OpenAiChatMessage, SummarySourceMessage } from '@mnemo/core';
import { renderPromptMessages } from './render-prompt-messages.js';

/** What {@link buildGraphExtractionPrompt} renders: new messages and the entities already known. */
export interface GraphExtractionPromptInput {
  readonly messages: readonly SummarySourceMessage[];
  readonly knownEntities: readonly Entity[];
}

/** Most known entities shown; the most recently updated are kept, so the prompt stays bounded. */
export const maxPromptKnownEntities = 100;

/** The entity types the graph knows; anything else is `other`. */
export const entityTypes = ['person', 'place', 'organization', 'device', 'event', 'other'] as const;

const instructions = [
  'You read a conversation between a user and an assistant and build a small knowledge graph of what the user talks about.',
  '',
  'Entities: the people, places, organizations, devices and events (trips, meetings, appointments) the user mentions, and other',
  'named things that matter to them. Not the user (refer to the user as "user" in relations and do not list them), not the assistant,',
  'and not general concepts (coffee, weather, music).',
  '- name: the most specific name used, as written ("Ana", "Hood River", "LARCH-RIDGE"). When an entity is one of the known',
  '  entities, use its known name, and list the new names the user gives it as aliases.',
  `- type: one of ${entityTypes.join(', ')}.`,
  '- aliases: other names used for it in the messages (short forms, nicknames); [] when there are none.',
  "- description: a few words on what it is to the user, in the user's language; null when the messages say nothing about it.",
  '',
  'Relations between two entities, or between the user and an entity:',
  '- subject and object: "user", or the name or an alias of an entity of your reply or of a known entity.',
  '- predicate: a snake_case English verb phrase read subject → object: lives_in, works_at, sister_of, owns, uses, runs,',
  '  member_of, travels_to, takes_place_in, located_in, part_of, …',
  '- sourceSeqs: the seq numbers of the messages it comes from, as shown in brackets ([seq 12]); only those seqs.',
  'Only what the messages state or the user clearly confirms; do not invent or infer beyond it.',
  '',
  'Answer with only a JSON object, no prose: {"entities": [{"name": "Ana", "type": "person", "aliases": [], "description": "sister"}],',
  '"relations": [{"subject": "Ana", "predicate": "sister_of", "object": "user", "sourceSeqs": [13]}]}.',
  'Answer {"entities": [], "relations": []} when there is nothing to keep.',
].join('\n');

/**
 * The chat prompt that asks an LLM for entities and relations: the instructions above (entity types,
 * aliases, snake_case predicates, "user" for the user, reuse of known names, the JSON format) as the
 * system message, then the known entities (at most {@link maxPromptKnownEntities}, most recently updated
 * first) and the new messages, each with its seq, as the user message.
 */
export function buildGraphExtractionPrompt(input: GraphExtractionPromptInput): OpenAiChatMessage[] {
  const shown = input.knownEntities
    .toSorted((a, b) => b.updatedAt.localeCompare(a.updatedAt))
    .slice(0, maxPromptKnownEntities);
  const known =
    shown.length === 0
      ? '(none yet)'
      : shown
          .map((entity) => {
            const aliases = entity.aliases.length === 0 ? '' : `; also: ${entity.aliases.join(', ')}`;
            return `- ${entity.name} (${entity.type}${aliases})${entity.description === undefined ? '' : ` — ${entity.description}`}`;
          })
          .join('\n');
  return [
    { role: 'system', content: instructions },
    {
      role: 'user',
      content: `Known entities:\n${known}\n\nNew messages:\n${renderPromptMessages(input.messages)}\n\nGraph as JSON:`,
    },
  ];
}

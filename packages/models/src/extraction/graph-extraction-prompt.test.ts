import type { Entity } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { fixtureKnownEntities, fixtureMessages } from './extraction.fixture.js';
import { buildGraphExtractionPrompt, entityTypes, maxPromptKnownEntities } from './graph-extraction-prompt.js';

describe('buildGraphExtractionPrompt', () => {
  it('shows the known entities with type, aliases and description, then each message with its seq', () => {
    const [system, user] = buildGraphExtractionPrompt({
      messages: fixtureMessages.slice(0, 2),
      knownEntities: fixtureKnownEntities,
    });

    expect(system!.role).toBe('system');
    expect(user!.content).toBe(
      [
        'Known entities:',
        '- LARCH-RIDGE (device; also: Larch Ridge node) — mesh relay node',
        '',
        'New messages:',
        "[seq 11 · 2024-05-02 08:15] user: Hi! I'm Maren, I run the mesh node on Larch Ridge.",
        '[seq 12 · 2024-05-02 08:15] assistant: Nice to meet you, Maren. How is the node doing?',
        '',
        'Graph as JSON:',
      ].join('\n'),
    );
  });

  it('tells the model the types, the "user" convention, snake_case predicates and the JSON format', () => {
    const instructions = buildGraphExtractionPrompt({ messages: fixtureMessages, knownEntities: [] })[0]!.content!;

    for (const type of entityTypes) expect(instructions).toContain(type);
    expect(instructions).toContain('refer to the user as "user"');
    expect(instructions).toContain('snake_case');
    expect(instructions).toContain('{"entities": [], "relations": []}');
    const example = /\{"entities": \[[\s\S]*?\]\}(?=\.)/.exec(instructions)![0];
    expect(JSON.parse(example)).toMatchObject({
      entities: [{ name: 'Ana', type: 'person' }],
      relations: [{ predicate: 'sister_of', object: 'user' }],
    });
  });

  it('says when no entity is known, and keeps only the most recently updated when there are many', () => {
    const many: Entity[] = Array.from({ length: maxPromptKnownEntities + 3 }, (_, index) => ({
      ...fixtureKnownEntities[0]!,
      id: `e${index}`,
      name: `node-${index}`,
      aliases: [],
      updatedAt: new Date(Date.UTC(2024, 0, 1 + index)).toISOString(),
    }));

    const empty = buildGraphExtractionPrompt({ messages: fixtureMessages, knownEntities: [] })[1]!.content!;
    const bounded = buildGraphExtractionPrompt({ messages: fixtureMessages, knownEntities: many })[1]!.content!;

    expect(empty).toContain('Known entities:\n(none yet)\n');
    expect(bounded.match(/^- node-/gm)).toHaveLength(maxPromptKnownEntities);
    expect(bounded).toContain(`- node-${maxPromptKnownEntities + 2} (device)`);
    expect(bounded).not.toContain('- node-2 (');
  });
});

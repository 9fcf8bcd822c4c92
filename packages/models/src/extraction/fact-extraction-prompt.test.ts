import type { Fact } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { fixtureKnownFacts, fixtureMessages } from './extraction.fixture.js';
import { buildFactExtractionPrompt, maxPromptKnownFacts } from './fact-extraction-prompt.js';

describe('buildFactExtractionPrompt', () => {
  it('shows each message with its seq, time and speaker, and only the current known facts', () => {
    const [system, user] = buildFactExtractionPrompt({ messages: fixtureMessages, knownFacts: fixtureKnownFacts });

    expect(system!.role).toBe('system');
    expect(user!.role).toBe('user');
    expect(user!.content).toBe(
      [
        'Known facts:',
        '- user · likes: coffee',
        '- user · trip_date: 14 June',
        '',
        'New messages:',
        "[seq 11 · 2024-05-02 08:15] user: Hi! I'm Maren, I run the mesh node on Larch Ridge.",
        '[seq 12 · 2024-05-02 08:15] assistant: Nice to meet you, Maren. How is the node doing?',
        '[seq 13 · 2024-05-02 08:16] user: Fine. My sister Ana is coming along on the Hood River trip —',
        '  we moved it to 21 June.',
        "[seq 14 · 2024-05-02 08:16] user: Oh, and I don't drink coffee anymore.",
        '',
        'Facts as JSON:',
      ].join('\n'),
    );
    expect(user!.content).not.toContain('Portland');
  });

  it('tells the model the rules a stored fact depends on', () => {
    const [system] = buildFactExtractionPrompt({ messages: fixtureMessages, knownFacts: [] });
    const instructions = system!.content!;

    expect(instructions).toContain('snake_case');
    expect(instructions).toContain('"negate"');
    expect(instructions).toContain("in the user's own words and language");
    expect(instructions).toContain('sourceSeqs');
    expect(instructions).toContain('{"facts": []}');
    // The example in the instructions must itself be a valid reply.
    const example = /\{"facts": \[\{[\s\S]*?\}\]\}/.exec(instructions)![0];
    expect(JSON.parse(example)).toMatchObject({ facts: [{ subject: 'user', attribute: 'likes', polarity: 'assert' }] });
  });

  it('says when nothing is known, and keeps only the newest current facts when there are many', () => {
    const many: Fact[] = Array.from({ length: maxPromptKnownFacts + 5 }, (_, index) => ({
      ...fixtureKnownFacts[0]!,
      id: `f${index}`,
      attribute: `attribute_${index}`,
      validFrom: new Date(Date.UTC(2024, 0, 1 + index)).toISOString(),
    }));

    const empty = buildFactExtractionPrompt({ messages: fixtureMessages, knownFacts: [] })[1]!.content!;
    const bounded = buildFactExtractionPrompt({ messages: fixtureMessages, knownFacts: many })[1]!.content!;

    expect(empty).toContain('Known facts:\n(none yet)\n');
    expect(bounded.match(/^- user · attribute_/gm)).toHaveLength(maxPromptKnownFacts);
    expect(bounded).toContain(`attribute_${maxPromptKnownFacts + 4}`);
    expect(bounded).not.toContain('attribute_4:');
  });
});

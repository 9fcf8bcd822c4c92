import { describe, expect, it } from 'vitest';
import type { SummarySourceMessage } from '../messages/summary-source-message.js';
import type { Entity } from './entity.js';
import type { ExtractedGraph } from './graph-extractor.js';
import { HeuristicGraphExtractor } from './heuristic-graph-extractor.js';

const extractor = new HeuristicGraphExtractor();

function messages(...contents: string[]): SummarySourceMessage[] {
  return contents.map((content, index) => ({
    seq: index + 1,
    role: 'user',
    content,
    createdAt: '2025-05-29T02:40:00.000Z',
  }));
}

async function extract(contents: string[], knownEntities: Entity[] = []): Promise<ExtractedGraph> {
  return extractor.extract({ messages: messages(...contents), knownEntities });
}

const entityLines = (graph: ExtractedGraph) =>
  graph.entities.map(
    (entity) => `${entity.name}:${entity.type}${entity.aliases?.length ? ` [${entity.aliases.join(', ')}]` : ''}`,
  );
const relationLines = (graph: ExtractedGraph) =>
  graph.relations.map((relation) => `${relation.subject} —${relation.predicate}→ ${relation.object}`);

describe('HeuristicGraphExtractor', () => {
  it('names the user entity by their stated name with user and their callsign as aliases, and links their node', async () => {
    const graph = await extract([
      "I'm Maren, callsign N0CALL. this node is !a3f9c2d1, a RAK4631 in a small case. home base is Hood River",
    ]);
    expect(entityLines(graph)).toEqual([
      'Maren:person [user, N0CALL]',
      '!a3f9c2d1:device',
      'Hood River:place',
      'RAK4631:device',
    ]);
    expect(relationLines(graph)).toEqual(['user —has_node→ !a3f9c2d1', 'user —home_town→ Hood River']);
  });

  it('reads relays in ALL-CAPS-WITH-DASHES, their ids as aliases and where they stand, with a placeholder user before a name is stated', async () => {
    const graph = await extract([
      'my main relay is a solar node called LARCH-RIDGE on Larch Mtn, id !5c11e08a',
      'got SNR -6 dB via LARCH-RIDGE with the USB-C cable and LMR-240 coax',
    ]);
    expect(entityLines(graph)).toEqual(['user:person', 'LARCH-RIDGE:device [!5c11e08a]', 'Larch Mtn:place']);
    expect(relationLines(graph)).toEqual(['user —uses_relay→ LARCH-RIDGE', 'LARCH-RIDGE —located_at→ Larch Mtn']);
    expect(graph.relations[0]!.sourceSeqs).toEqual([1, 2]);
  });

  it('links people by relation, their nodes and where they live', async () => {
    const graph = await extract([
      'my buddy Tomas is coming along. his node is !7be104c2',
      'Tomas lives in Bend.',
      'my partner Ines watches from home',
    ]);
    expect(entityLines(graph)).toEqual([
      'user:person',
      'Tomas:person',
      '!7be104c2:device',
      'Bend:place',
      'Ines:person',
    ]);
    expect(relationLines(graph)).toEqual([
      'user —buddy→ Tomas',
      'Tomas —has_node→ !7be104c2',
      'Tomas —lives_in→ Bend',
      'user —partner→ Ines',
    ]);
  });

  it('reads places after prepositions and other capitalized names mid-sentence, but not from questions', async () => {
    const graph = await extract([
      'last fall from Cloud Cap saddle I got a fix',
      'tested the new whip at Mirror Lake',
      'planning the Timberline Trail loop',
      'weather for Timberline Lodge?',
    ]);
    expect(entityLines(graph)).toEqual(['Cloud Cap:place', 'Mirror Lake:place', 'Timberline Trail:other']);
    expect(graph.relations).toEqual([]);
  });

  it('reuses the stored spelling, type and user name when the entities are already known', async () => {
    const known: Entity[] = [
      {
        id: 'e1',
        tenantId: 't',
        userId: 'u',
        name: 'Maren',
        type: 'person',
        aliases: ['user'],
        createdAt: '',
        updatedAt: '',
      },
      {
        id: 'e2',
        tenantId: 't',
        userId: 'u',
        name: 'LARCH-RIDGE',
        type: 'device',
        aliases: ['!5c11e08a'],
        createdAt: '',
        updatedAt: '',
      },
    ];
    const graph = await extract(['signal via !5c11e08a is fine', 'my buddy Tomas is here'], known);
    expect(entityLines(graph)).toEqual(['Maren:person [user]', 'Tomas:person', 'LARCH-RIDGE:device']);
    expect(relationLines(graph)).toEqual(['user —buddy→ Tomas', 'user —uses_relay→ LARCH-RIDGE']);
  });

  it('ignores assistant messages', async () => {
    const graph = await extractor.extract({
      messages: [
        {
          seq: 1,
          role: 'assistant',
          content: 'Noted: relay LARCH-RIDGE at Larch Mountain, buddy Tomas.',
          createdAt: '2025-05-29T02:40:00.000Z',
        },
      ],
      knownEntities: [],
    });
    expect(graph).toEqual({ entities: [], relations: [] });
  });
});

import type { Entity, Fact, SummarySourceMessage } from '@mnemo/core';

// A short conversation with a fact, a correction of a known fact, an ended fact and people, places and
// devices: the input of the extraction prompts and extractors in tests.

/** Messages seq 11–14 of one conversation. */
export const fixtureMessages: readonly SummarySourceMessage[] = [
  {
    seq: 11,
    role: 'user',
    content: "Hi! I'm Maren, I run the mesh node on Larch Ridge.",
    createdAt: '2024-05-02T08:15:00.000Z',
  },
  {
    seq: 12,
    role: 'assistant',
    content: 'Nice to meet you, Maren. How is the node doing?',
    createdAt: '2024-05-02T08:15:04.000Z',
  },
  {
    seq: 13,
    role: 'user',
    content: 'Fine. My sister Ana is coming along on the Hood River trip —\nwe moved it to 21 June.',
    createdAt: '2024-05-02T08:16:00.000Z',
  },
  { seq: 14, role: 'user', content: "Oh, and I don't drink coffee anymore.", createdAt: '2024-05-02T08:16:30.000Z' },
];

function fact(id: string, attribute: string, value: string, validFrom: string, validTo?: string): Fact {
  return {
    id,
    tenantId: 't1',
    userId: 'u1',
    subject: 'user',
    attribute,
    value,
    text: `${attribute}: ${value}`,
    confidence: 1,
    validFrom,
    ...(validTo === undefined ? {} : { validTo }),
    sourceSeqs: [2],
    extractor: 'heuristic@1',
    createdAt: validFrom,
  };
}

/** Two current facts (the trip date that seq 13 corrects, coffee that seq 14 ends) and a superseded one. */
export const fixtureKnownFacts: readonly Fact[] = [
  fact('f1', 'trip_date', '14 June', '2024-04-20T10:00:00.000Z'),
  fact('f2', 'likes', 'coffee', '2024-04-21T10:00:00.000Z'),
  fact('f3', 'home_town', 'Portland', '2024-01-01T10:00:00.000Z', '2024-03-01T10:00:00.000Z'),
];

/** A good fact-extraction reply for the fixture. */
export const fixtureFactsReply = {
  facts: [
    {
      subject: 'user',
      attribute: 'name',
      value: 'Maren',
      text: "I'm Maren",
      confidence: 1,
      sourceSeqs: [11],
      polarity: 'assert',
    },
    {
      subject: 'user',
      attribute: 'trip_date',
      value: '21 June',
      text: 'we moved it to 21 June',
      confidence: 0.9,
      sourceSeqs: [13],
      polarity: 'assert',
    },
    {
      subject: 'user',
      attribute: 'likes',
      value: 'coffee',
      text: "I don't drink coffee anymore",
      confidence: 0.9,
      sourceSeqs: [14],
      polarity: 'negate',
    },
    {
      subject: 'user',
      attribute: 'sister',
      value: 'Ana',
      text: 'My sister Ana is coming along',
      confidence: 1,
      sourceSeqs: [13],
      polarity: 'assert',
    },
  ],
};

/** An entity the user mentioned before. */
export const fixtureKnownEntities: readonly Entity[] = [
  {
    id: 'e1',
    tenantId: 't1',
    userId: 'u1',
    name: 'LARCH-RIDGE',
    type: 'device',
    aliases: ['Larch Ridge node'],
    description: 'mesh relay node',
    createdAt: '2024-04-01T10:00:00.000Z',
    updatedAt: '2024-04-01T10:00:00.000Z',
  },
];

/** A good graph-extraction reply for the fixture. */
export const fixtureGraphReply = {
  entities: [
    { name: 'Ana', type: 'person', aliases: [], description: "the user's sister" },
    { name: 'Hood River', type: 'place', aliases: [], description: null },
    { name: 'Hood River trip', type: 'event', aliases: ['the trip'], description: 'moved to 21 June' },
  ],
  relations: [
    { subject: 'user', predicate: 'runs', object: 'Larch Ridge node', sourceSeqs: [11] },
    { subject: 'Ana', predicate: 'sister_of', object: 'user', sourceSeqs: [13] },
    { subject: 'Hood River trip', predicate: 'takes_place_in', object: 'Hood River', sourceSeqs: [13] },
  ],
};

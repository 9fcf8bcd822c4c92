import { createMemory, HashedEmbedder } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';

/** Who and what the inspector tests seed: a tenant with a compacted conversation, and a second tenant. */
export const inspectorSeed = Object.freeze({
  tenant: 'mesh',
  key: 'mesh-inspector-key',
  user: 'ana',
  conversation: 'ridge-trip',
  otherTenant: 'ops',
  otherKey: 'ops-inspector-key',
  otherUser: 'omar',
  otherConversation: 'secret-ops-plan',
  failedJobError: 'embedding endpoint refused the batch: 503 Service Unavailable',
});

const turns = [
  ['I live in Oslo and I run a mesh radio node on the ridge.', 'Nice, a ridge node gets a wide view. What hardware?'],
  [
    'My battery is a 3000 mAh pack from the radio shop.',
    'That should last a day on the node with a small solar panel.',
  ],
  ['My sister Tomas lives in Bend and she wants a node too.', 'Bend is far; she would need her own gateway.'],
  ['We plan a trip to Hood River on 21 June to fix the relay.', 'Good, check the antenna mount while you are there.'],
  ['The relay at LARCH-RIDGE reports SNR minus 7 dB.', 'Minus 7 dB is weak; raise the antenna or shorten the hop.'],
  ['I just moved to Bergen, closer to the coast.', 'Bergen has a busy mesh; you will find peers quickly.'],
  ['Which channel does the coast mesh use?', 'Most of them use the LongFast preset on the default channel.'],
  ['Remind me what battery I bought.', 'You said a 3000 mAh pack from the radio shop.'],
  ['The ridge relay needs a new enclosure before winter.', 'A sealed IP67 box with a vent will do.'],
  ['How many hops from Bergen to the ridge?', 'About four hops if the LARCH-RIDGE relay stays up.'],
];

/**
 * Writes the store the inspector tests serve: tenant `mesh` with one conversation that was compacted
 * (two summary versions), facts extracted and one superseded, four context builds in the ledger, a
 * failed job and a pending one; tenant `ops` with a conversation of its own. Runs in the test process, then closes.
 */
export async function seedInspectorStore(path: string): Promise<void> {
  const store = createSqliteStore({ path });
  // The served process embeds with MNEMO_EMBEDDER=hashed: the same model, so recall finds these vectors.
  const memory = createMemory({
    store,
    embedder: new HashedEmbedder(),
    worker: { autoStart: false },
    compaction: { settings: { triggerTokens: 200, keepRecentTokens: 60, keepRecentTurns: 1, maxSummaryTokens: 120 } },
  });
  const scope = {
    tenantId: inspectorSeed.tenant,
    userId: inspectorSeed.user,
    conversationId: inspectorSeed.conversation,
  };
  try {
    for (const [index, [question, answer]] of turns.entries()) {
      await memory.append(scope, [
        { role: 'user', content: question!, createdAt: new Date(Date.UTC(2026, 10, 1, 9, index * 5)).toISOString() },
        {
          role: 'assistant',
          content: answer!,
          createdAt: new Date(Date.UTC(2026, 10, 1, 9, index * 5 + 1)).toISOString(),
        },
      ]);
      if (index === 4) await memory.runPendingJobs();
      if (index % 3 === 0) await memory.buildContext(scope, { policy: 'hybrid', maxTokens: 400 });
    }
    await memory.runPendingJobs();
    await memory.compact(scope);
    const other = {
      tenantId: inspectorSeed.otherTenant,
      userId: inspectorSeed.otherUser,
      conversationId: inspectorSeed.otherConversation,
    };
    await memory.append(other, [
      { role: 'user', content: 'I live in Lisbon. The ops plan is confidential.' },
      { role: 'assistant', content: 'Understood.' },
    ]);
    await memory.runPendingJobs();
    await memory.buildContext(other, { policy: 'full', maxTokens: 400 });
    const now = new Date().toISOString();
    await store.enqueueJob(scope, { kind: 'embed', runAt: now, maxAttempts: 1 });
    const lease = await store.leaseJob({ workerId: 'seed', leaseMs: 60_000, now, kinds: ['embed'] });
    if (lease === undefined) throw new Error('the seeded embed job was not leased');
    await store.failJob(lease, { error: inspectorSeed.failedJobError, now });
    // A job that waits (runs tomorrow): the background view shows how long it has been pending.
    await store.enqueueJob(scope, {
      kind: 'compact',
      runAt: new Date(Date.now() + 86_400_000).toISOString(),
      maxAttempts: 3,
    });
  } finally {
    await memory.close();
  }
}

import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { recallTuning } from '../recall/recall.js';
import { createMemory } from './create-memory.js';

const scope = { userId: 'ana', conversationId: 'trip' };

describe('createMemory inspection reads', () => {
  it('builds a preview that leaves the usage ledger as it was when record is false', async () => {
    const memory = createMemory({ store: new InMemoryStore(), compaction: false, knowledge: false });
    await memory.append(scope, [
      { role: 'user', content: 'We leave for Hood River on 21 June.' },
      { role: 'assistant', content: 'Noted.' },
    ]);
    const preview = await memory.buildContext(scope, { policy: 'full', maxTokens: 500, record: false });
    expect((await memory.listUsage(scope)).items).toEqual([]);
    const sent = await memory.buildContext(scope, { policy: 'full', maxTokens: 500 });
    expect(sent.report).toEqual(preview.report);
    const ledger = (await memory.listUsage(scope)).items;
    expect(ledger.map((entry) => [entry.kind, entry.sentTokens, entry.fullHistoryTokens])).toEqual([
      ['context', sent.report.sentTokens, sent.report.fullHistoryTokens],
    ]);
    await expect(memory.buildContext(scope, { record: 'no' as never })).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'invalid_input'),
    );
  });

  it('explains each recalled item of a hybrid context with its keyword rank and fused score', async () => {
    const memory = createMemory({ store: new InMemoryStore(), compaction: false, knowledge: false });
    await memory.append(scope, { role: 'user', content: 'My battery is a 3000 mAh pack from the radio shop.' });
    for (let index = 0; index < 30; index += 1)
      await memory.append(scope, { role: 'user', content: `filler message number ${index} about the weather` });
    const { report } = await memory.buildContext(scope, {
      policy: 'hybrid',
      maxTokens: 300,
      query: 'what battery pack do I have?',
      record: false,
    });
    const recalled = [...report.parts.flatMap((part) => part.items ?? []), ...report.excludedItems].filter(
      (item) => item.kind === 'recalled',
    );
    const battery = recalled.find((item) => item.seq === 1);
    expect(battery?.explain).toMatchObject({ keywordRank: 1, fused: expect.any(Number) as unknown });
    // Its score is the fused score raised by its session's coverage of the query's words (no neighbour or session share: it is alone),
    // times its own factor (the length prior of its content words).
    expect(battery?.explain?.own).toBeCloseTo(6 ** recallTuning.lengthPrior);
    expect(battery?.score).toBeCloseTo(
      battery!.explain!.fused *
        (1 + recallTuning.episodeCoverage * (battery!.explain!.coverage ?? 0)) *
        battery!.explain!.own!,
    );
    expect(battery?.explain?.coverage).toBeGreaterThan(0);
  });

  it('searches conversations by id text within the tenant only', async () => {
    const memory = createMemory({ store: new InMemoryStore(), compaction: false, knowledge: false });
    await memory.append({ tenantId: 'a', userId: 'ana', conversationId: 'Trip-2024' }, { role: 'user', content: 'x' });
    await memory.append({ tenantId: 'b', userId: 'ana', conversationId: 'trip-b' }, { role: 'user', content: 'x' });
    expect(
      (await memory.listConversations({ tenantId: 'a', search: ' trip ' })).items.map((c) => c.conversationId),
    ).toEqual(['Trip-2024']);
    expect((await memory.listConversations({ tenantId: 'a', search: '   ' })).items).toHaveLength(1);
    await expect(memory.listConversations({ search: 'x'.repeat(201) })).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'invalid_input'),
    );
  });

  it('lists the recent job failures and counts jobs by kind for one tenant', async () => {
    const store = new InMemoryStore();
    const memory = createMemory({ store, compaction: false, knowledge: false, worker: { autoStart: false } });
    await store.enqueueJob(
      { tenantId: 'a', userId: 'ana', conversationId: 'trip' },
      { kind: 'compact', runAt: new Date(0).toISOString(), maxAttempts: 1 },
    );
    await store.enqueueJob(
      { tenantId: 'b', userId: 'bo', conversationId: 'x' },
      { kind: 'embed', runAt: new Date(0).toISOString(), maxAttempts: 1 },
    );
    const leased = await store.leaseJob({
      workerId: 'w',
      leaseMs: 1000,
      now: new Date().toISOString(),
      kinds: ['compact'],
    });
    await store.failJob(leased!, { error: 'upstream 500', now: new Date().toISOString() });
    expect((await memory.jobs.listRecentFailures({ tenantId: 'a' })).map((job) => job.lastError)).toEqual([
      'upstream 500',
    ]);
    expect(await memory.jobs.listRecentFailures({ tenantId: 'b' })).toEqual([]);
    expect(
      (await memory.jobs.countByKind({ tenantId: 'b' })).map((row) => `${row.kind}:${row.status}:${row.count}`),
    ).toEqual(['embed:pending:1']);
    await expect(memory.jobs.listRecentFailures({}, { limit: 0 })).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'invalid_input'),
    );
  });
});

import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { createMemory } from './create-memory.js';

const day = 86_400_000;
const start = Date.parse('2025-01-01T00:00:00.000Z');

/** A memory on a fake clock with three users' messages, ten days apart, and a fact the oldest message stated. */
async function seeded() {
  let clock = start;
  const memory = createMemory({
    store: new InMemoryStore(),
    now: () => clock,
    worker: { autoStart: false },
    compaction: false,
  });
  for (let index = 0; index < 4; index += 1) {
    for (const userId of ['alice', 'bob', 'carol']) {
      await memory.append(
        { userId, conversationId: `${userId}-chat` },
        { role: 'user', content: `day ${index * 10}: my callsign is K${index}${userId.toUpperCase()}` },
      );
    }
    clock += 10 * day;
  }
  await memory.runPendingJobs();
  return { memory, setClock: (time: number) => (clock = time) };
}

describe('applyRetention', () => {
  it("erases each user's messages past their policy, with the facts only they stated, on the memory's clock", async () => {
    const { memory, setClock } = await seeded();
    setClock(start + 35 * day);
    const rules = { tenantId: 'default', policy: { maxAgeDays: 15 }, users: { bob: { maxAgeDays: 30 }, carol: null } };

    const dry = await memory.applyRetention(rules, { dryRun: true });
    expect(dry.map((outcome) => [outcome.userId, outcome.before, outcome.receipt])).toEqual([
      ['alice', '2025-01-21T00:00:00.000Z', undefined],
      ['bob', '2025-01-06T00:00:00.000Z', undefined],
    ]);
    expect((await memory.listMessages({ userId: 'alice', conversationId: 'alice-chat' })).length).toBe(4);

    const outcomes = await memory.applyRetention(rules);
    expect(outcomes.map((outcome) => [outcome.userId, outcome.receipt?.messages])).toEqual([
      ['alice', 2],
      ['bob', 1],
    ]);
    const kept = async (userId: string) =>
      (await memory.listMessages({ userId, conversationId: `${userId}-chat` })).map((message) =>
        message.content.slice(0, 6),
      );
    expect(await kept('alice')).toEqual(['day 20', 'day 30']);
    expect(await kept('bob')).toEqual(['day 10', 'day 20', 'day 30']);
    expect(await kept('carol')).toEqual(['day 0:', 'day 10', 'day 20', 'day 30']);
    // The callsign facts of erased messages went with them; the audit log says what, without content.
    const callsigns = (await memory.facts.history({ userId: 'alice' }, { attribute: 'callsign' })).map(
      (fact) => fact.value,
    );
    expect(callsigns).not.toContain('K0ALICE');
    expect(callsigns).not.toContain('K1ALICE');
    expect((await memory.erasures({ userId: 'alice' }))[0]).toMatchObject({
      selection: { before: '2025-01-21T00:00:00.000Z' },
      messages: 2,
    });

    // Again at the same time: nothing older is left, so nothing is erased and no empty audit entry is written.
    expect(await memory.applyRetention(rules)).toEqual([]);
    expect((await memory.erasures({ userId: 'alice' })).length).toBe(1);
    await memory.close();
  });

  it('keeps everything without a policy, limits a run to named users, and refuses a bad policy', async () => {
    const { memory, setClock } = await seeded();
    setClock(start + 400 * day);
    expect(await memory.applyRetention({ tenantId: 'default' })).toEqual([]);
    expect(await memory.applyRetention({ tenantId: 'other', policy: { maxAgeDays: 1 } })).toEqual([]);
    const one = await memory.applyRetention({ tenantId: 'default', policy: { maxAgeDays: 1 } }, { userIds: ['carol'] });
    expect(one.map((outcome) => [outcome.userId, outcome.receipt?.messages])).toEqual([['carol', 4]]);
    expect((await memory.listMessages({ userId: 'alice', conversationId: 'alice-chat' })).length).toBe(4);
    await expect(memory.applyRetention({ tenantId: 'default', policy: { maxAgeDays: 0 } })).rejects.toSatisfy(
      (error: unknown) => isMemoryError(error, 'invalid_input'),
    );
    await memory.close();
  });
});

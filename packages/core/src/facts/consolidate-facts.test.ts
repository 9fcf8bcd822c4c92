import { describe, expect, it } from 'vitest';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { consolidateFacts, valueWords } from './consolidate-facts.js';
import type { NewFact } from './fact.js';

const user = { tenantId: 'default', userId: 'maren' };
const now = '2025-07-01T00:00:00.000Z';

function fact(attribute: string, value: string, validFrom: string, overrides: Partial<NewFact> = {}): NewFact {
  return {
    subject: 'user',
    attribute,
    value,
    text: `${attribute}: ${value}`,
    confidence: 0.7,
    validFrom,
    sourceSeqs: [],
    extractor: 'test@1',
    createdAt: validFrom,
    ...overrides,
  };
}

describe('consolidateFacts', () => {
  it('merges paraphrases of one attribute into the more specific value and keeps the rest, history kept', async () => {
    const store = new InMemoryStore();
    const bank = await store.insertFact(user, fact('owns', 'a 10000 mAh power bank', '2025-05-01T00:00:00.000Z'));
    const shortBank = await store.insertFact(user, fact('owns', '10000mAh power bank', '2025-05-03T00:00:00.000Z'));
    const vaguer = await store.insertFact(user, fact('owns', 'power bank', '2025-05-04T00:00:00.000Z'));
    const kayak = await store.insertFact(user, fact('owns', 'a kayak', '2025-05-05T00:00:00.000Z'));
    const dogs = await store.insertFact(user, fact('likes', 'dogs', '2025-05-01T00:00:00.000Z'));
    const hotDogs = await store.insertFact(user, fact('likes', 'hot dogs', '2025-05-02T00:00:00.000Z'));
    // Another subject's fact of the same value is not a duplicate of the user's.
    const tomas = await store.insertFact(
      user,
      fact('owns', 'power bank', '2025-05-04T00:00:00.000Z', { subject: 'Tomas' }),
    );

    const result = await consolidateFacts(store, user, now);

    expect(result.merged.map(({ duplicate, into }) => [duplicate.value, into.value])).toEqual([
      ['10000mAh power bank', 'a 10000 mAh power bank'],
      ['power bank', 'a 10000 mAh power bank'],
    ]);
    expect(result.settled).toEqual([]);
    expect((await store.listFacts(user)).map((item) => item.id).sort()).toEqual(
      [bank.id, kayak.id, dogs.id, hotDogs.id, tomas.id].sort(),
    );
    const history = await store.listFacts(user, { includeHistory: true, attribute: 'owns', subject: 'user' });
    expect(
      history
        .filter((item) => item.id === shortBank.id || item.id === vaguer.id)
        .map((item) => [item.validTo, item.supersededBy]),
    ).toEqual([
      [now, bank.id],
      [now, bank.id],
    ]);
  });

  it('settles two current values of a single-valued attribute by time: the newer stays, the older ends when it began', async () => {
    const store = new InMemoryStore();
    const larch = await store.insertFact(user, fact('main_relay', 'LARCH-RIDGE', '2025-05-29T02:58:03.000Z'));
    const bear = await store.insertFact(user, fact('main_relay', 'BEAR-CREEK', '2025-06-20T10:00:00.000Z'));
    const likes = await store.insertFact(user, fact('likes', 'rain', '2025-05-01T00:00:00.000Z'));
    await store.insertFact(user, fact('likes', 'snow', '2025-06-01T00:00:00.000Z'));

    const dry = await consolidateFacts(store, user, now, { dryRun: true });
    expect(dry.settled.map(({ older, newer }) => [older.value, newer.value])).toEqual([['LARCH-RIDGE', 'BEAR-CREEK']]);
    expect((await store.listFacts(user, { attribute: 'main_relay' })).length).toBe(2);

    const result = await consolidateFacts(store, user, now);
    expect(result.settled.map(({ older, newer }) => [older.id, newer.id])).toEqual([[larch.id, bear.id]]);
    expect((await store.listFacts(user, { attribute: 'main_relay' })).map((item) => item.value)).toEqual([
      'BEAR-CREEK',
    ]);
    expect(
      (await store.listFacts(user, { attribute: 'main_relay', asOf: '2025-06-01T00:00:00.000Z' })).map(
        (item) => item.value,
      ),
    ).toEqual(['LARCH-RIDGE']);
    const [ended] = await store.listFacts(user, { includeHistory: true, attribute: 'main_relay' });
    expect(ended).toMatchObject({ validTo: bear.validFrom, supersededBy: bear.id });
    // A multi-valued attribute keeps both values; a second pass changes nothing.
    expect((await store.listFacts(user, { attribute: 'likes' })).map((item) => item.id)).toContain(likes.id);
    expect(await consolidateFacts(store, user, now)).toEqual({ merged: [], settled: [] });
  });

  it('leaves expired facts and other users alone', async () => {
    const store = new InMemoryStore();
    await store.insertFact(
      user,
      fact('main_relay', 'LARCH-RIDGE', '2025-05-01T00:00:00.000Z', { expiresAt: '2025-06-01T00:00:00.000Z' }),
    );
    await store.insertFact(user, fact('main_relay', 'BEAR-CREEK', '2025-05-02T00:00:00.000Z'));
    await store.insertFact({ ...user, userId: 'bob' }, fact('main_relay', 'OWL-HOLLOW', '2025-05-03T00:00:00.000Z'));
    expect(await consolidateFacts(store, user, now)).toEqual({ merged: [], settled: [] });
    expect((await store.listFacts({ ...user, userId: 'bob' })).map((item) => item.value)).toEqual(['OWL-HOLLOW']);
  });

  it('reads digits apart from letters and dates in one form', () => {
    expect([...valueWords('a 10000mAh power-bank')]).toEqual(['10000', 'mah', 'power', 'bank']);
    expect(valueWords('June 21')).toEqual(valueWords('21st of June'));
  });
});

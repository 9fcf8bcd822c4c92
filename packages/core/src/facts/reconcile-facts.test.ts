import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import type { UserScope } from '../messages/scope.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import type { Fact, NewFact } from './fact.js';
import type { ExtractedFact } from './fact-extractor.js';
import { reconcileFacts, type ReconcileContext } from './reconcile-facts.js';

const user: UserScope = { tenantId: 't1', userId: 'maren' };
const times = new Map([
  [3, '2025-05-29T02:43:12.000Z'],
  [7, '2025-05-29T02:48:20.000Z'],
  [35, '2025-06-01T23:05:12.000Z'],
  [40, '2025-06-02T10:00:00.000Z'],
]);
const context: ReconcileContext = { conversationId: 'node-7', extractor: 'heuristic@1', now: times };

function extracted(
  attribute: string,
  value: string,
  seq: number,
  overrides: Partial<ExtractedFact> = {},
): ExtractedFact {
  return { subject: 'user', attribute, value, text: `said ${value}`, confidence: 0.8, sourceSeqs: [seq], ...overrides };
}

const current = async (store: InMemoryStore, scope: UserScope = user) =>
  (await store.listFacts(scope)).map((fact) => `${fact.subject} ${fact.attribute}=${fact.value}`);

describe('reconcileFacts', () => {
  it('stores new facts with their provenance and the source message time when nothing is known yet', async () => {
    const store = new InMemoryStore();
    const result = await reconcileFacts(
      store,
      user,
      [extracted('home_town', 'Hood River', 3), extracted('likes', 'hiking', 7)],
      context,
    );
    expect(result.added.map((fact) => fact.value)).toEqual(['Hood River', 'hiking']);
    expect(result.added[0]).toMatchObject({
      subject: 'user',
      text: 'said Hood River',
      confidence: 0.8,
      validFrom: times.get(3),
      createdAt: times.get(3),
      sourceConversationId: 'node-7',
      sourceSeqs: [3],
      extractor: 'heuristic@1',
    });
    expect(await current(store)).toEqual(['user home_town=Hood River', 'user likes=hiking']);
  });

  it('supersedes a value the user said changed even where the attribute may have several, and adds otherwise', async () => {
    const store = new InMemoryStore();
    await reconcileFacts(
      store,
      user,
      [extracted('monthly_cloud_budget', '$1,200', 3), extracted('editor', 'Emacs', 3)],
      context,
    );
    await reconcileFacts(
      store,
      user,
      [extracted('monthly_cloud_budget', '$2,250 a month', 35, { replaces: true }), extracted('editor', 'Helix', 35)],
      context,
    );
    expect(await current(store)).toEqual([
      'user editor=Emacs',
      'user monthly_cloud_budget=$2,250 a month',
      'user editor=Helix',
    ]);
    const [old] = await store.listFacts(user, { includeHistory: true, attribute: 'monthly_cloud_budget' });
    expect(old).toMatchObject({ value: '$1,200', validTo: times.get(35) });
  });

  it('supersedes a single-valued fact and keeps the old one in history, answering asOf with it', async () => {
    const store = new InMemoryStore();
    await reconcileFacts(store, user, [extracted('trip_date', 'June 14', 7)], context);
    const result = await reconcileFacts(store, user, [extracted('trip_date', 'June 21', 35)], context);
    expect(result.superseded).toHaveLength(1);
    expect(result.superseded[0]!.old).toMatchObject({
      value: 'June 14',
      validTo: times.get(35),
      supersededBy: result.superseded[0]!.new.id,
    });
    expect(result.added).toEqual([]);
    expect(await current(store)).toEqual(['user trip_date=June 21']);
    const history = await store.listFacts(user, { attribute: 'trip_date', includeHistory: true });
    expect(history.map((fact) => [fact.value, fact.validTo])).toEqual([
      ['June 14', times.get(35)],
      ['June 21', undefined],
    ]);
    expect(
      (await store.listFacts(user, { attribute: 'trip_date', asOf: '2025-05-30T00:00:00.000Z' })).map(
        (fact) => fact.value,
      ),
    ).toEqual(['June 14']);
  });

  it('adds a value of a multi-valued attribute beside the others', async () => {
    const store = new InMemoryStore();
    await reconcileFacts(
      store,
      user,
      [extracted('likes', 'hiking', 3), extracted('likes', 'sourdough', 7), extracted('buddy', 'Tomas', 7)],
      context,
    );
    await reconcileFacts(store, user, [extracted('buddy', 'Ines', 35)], context);
    expect(await current(store)).toEqual([
      'user likes=hiking',
      'user likes=sourdough',
      'user buddy=Tomas',
      'user buddy=Ines',
    ]);
  });

  it('ignores a duplicate of a current fact when only case, articles or date spelling differ', async () => {
    const store = new InMemoryStore();
    await reconcileFacts(
      store,
      user,
      [
        extracted('home_town', 'Hood River', 3),
        extracted('owns', 'a power bank', 3),
        extracted('trip_date', 'June 21', 7),
      ],
      context,
    );
    const again = [
      extracted('home_town', 'hood river', 35),
      extracted('owns', 'my power bank', 35),
      extracted('trip_date', '21st of June', 35),
    ];
    const result = await reconcileFacts(store, user, again, context);
    expect(result.ignored).toEqual(again);
    expect(result.added).toEqual([]);
    expect(result.superseded).toEqual([]);
    expect(await store.listFacts(user, { includeHistory: true })).toHaveLength(3);
  });

  it('ignores facts replayed from the same message when a job runs the same batch again', async () => {
    const store = new InMemoryStore();
    const batch = [extracted('trip_date', 'June 14', 7), extracted('trip_date', 'June 21', 35)];
    await reconcileFacts(store, user, batch, context);
    const replay = await reconcileFacts(store, user, batch, context);
    expect(replay.ignored).toEqual(batch);
    expect((await store.listFacts(user, { includeHistory: true })).map((fact) => fact.value)).toEqual([
      'June 14',
      'June 21',
    ]);
  });

  it('does not let an older statement override a newer value', async () => {
    const store = new InMemoryStore();
    await reconcileFacts(store, user, [extracted('lives_in', 'Portland', 40)], context);
    const late = await reconcileFacts(store, user, [extracted('lives_in', 'Bend', 3)], {
      ...context,
      conversationId: 'older-chat',
    });
    expect(late.ignored).toHaveLength(1);
    expect(await current(store)).toEqual(['user lives_in=Portland']);
  });

  it('retires the matching current fact when the polarity is negate, and ignores a negation of nothing', async () => {
    const store = new InMemoryStore();
    await reconcileFacts(store, user, [extracted('likes', 'jazz', 3), extracted('likes', 'hiking', 3)], context);
    const result = await reconcileFacts(
      store,
      user,
      [extracted('likes', 'Jazz', 35, { polarity: 'negate' }), extracted('likes', 'opera', 35, { polarity: 'negate' })],
      context,
    );
    expect(result.retired.map((fact) => [fact.value, fact.validTo])).toEqual([['jazz', times.get(35)]]);
    expect(result.ignored.map((fact) => fact.value)).toEqual(['opera']);
    expect(await current(store)).toEqual(['user likes=hiking']);
    expect(await store.listFacts(user, { includeHistory: true })).toHaveLength(2);
  });

  it('leaves facts of another user and another tenant untouched', async () => {
    const store = new InMemoryStore();
    const other = { ...user, userId: 'tomas' };
    const foreign = { tenantId: 't2', userId: 'maren' };
    await reconcileFacts(store, other, [extracted('lives_in', 'Bend', 3)], context);
    await reconcileFacts(store, foreign, [extracted('lives_in', 'Bend', 3)], context);
    await reconcileFacts(
      store,
      user,
      [extracted('lives_in', 'Hood River', 7), extracted('lives_in', 'Bend', 35, { polarity: 'negate' })],
      context,
    );
    expect(await current(store, other)).toEqual(['user lives_in=Bend']);
    expect(await current(store, foreign)).toEqual(['user lives_in=Bend']);
    expect(await current(store)).toEqual(['user lives_in=Hood River']);
  });

  it('keeps facts about different subjects apart', async () => {
    const store = new InMemoryStore();
    await reconcileFacts(
      store,
      user,
      [extracted('node_id', '!a3f9c2d1', 3), extracted('node_id', '!7be104c2', 7, { subject: 'Tomas' })],
      context,
    );
    expect(await current(store)).toEqual(['user node_id=!a3f9c2d1', 'Tomas node_id=!7be104c2']);
  });

  it('re-reads and retries once when another worker superseded the same fact first', async () => {
    const store = new InMemoryStore();
    await reconcileFacts(store, user, [extracted('lives_in', 'Bend', 3)], context);
    const racing = raceOnce(store, async () => {
      const [stored] = await store.listFacts(user, { attribute: 'lives_in' });
      await store.insertFact(user, newFact('lives_in', 'Salem', times.get(7)!), { supersedes: stored!.id });
    });
    const result = await reconcileFacts(racing, user, [extracted('lives_in', 'Portland', 35)], context);
    expect(result.superseded.map(({ old, new: next }) => [old.value, next.value])).toEqual([['Salem', 'Portland']]);
    expect(
      (await store.listFacts(user, { includeHistory: true })).map((fact) => [fact.value, fact.validTo === undefined]),
    ).toEqual([
      ['Bend', false],
      ['Salem', false],
      ['Portland', true],
    ]);
  });

  it('ignores malformed facts and throws invalid_input when a source message has no time', async () => {
    const store = new InMemoryStore();
    const malformed = [
      extracted('', 'x', 3),
      extracted('likes', '  ', 3),
      extracted('likes', 'tea', 3, { sourceSeqs: [] }),
    ];
    expect((await reconcileFacts(store, user, malformed, context)).ignored).toEqual(malformed);
    await expect(reconcileFacts(store, user, [extracted('likes', 'tea', 99)], context)).rejects.toSatisfy((error) =>
      isMemoryError(error, 'invalid_input'),
    );
    const byFunction = await reconcileFacts(store, user, [extracted('likes', 'tea', 99)], {
      ...context,
      now: () => '2025-07-01T00:00:00.000Z',
    });
    expect(byFunction.added[0]!.validFrom).toBe('2025-07-01T00:00:00.000Z');
  });
});

function newFact(attribute: string, value: string, validFrom: string): NewFact {
  return {
    subject: 'user',
    attribute,
    value,
    text: value,
    confidence: 1,
    validFrom,
    sourceSeqs: [],
    extractor: 'api',
    createdAt: validFrom,
  };
}

/** A store whose first superseding insert is preceded by `interfere` (another worker), so that insert conflicts. */
function raceOnce(store: InMemoryStore, interfere: () => Promise<void>): InMemoryStore {
  let raced = false;
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property !== 'insertFact' || typeof value !== 'function')
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      return async (...args: Parameters<InMemoryStore['insertFact']>): Promise<Fact> => {
        if (!raced && args[2]?.supersedes !== undefined) {
          raced = true;
          await interfere();
        }
        return target.insertFact(...args);
      };
    },
  });
}

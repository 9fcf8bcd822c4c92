import type { Entity, Fact, RecallHit, Relation } from '@mnemo/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-server.js';

/** The bodies of the knowledge routes. */
type FactBody = { readonly fact: Fact };
type FactsBody = { readonly facts: readonly Fact[] };

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer({
    auth: {
      keys: [
        { key: 'key-a', tenantId: 'tenant-a' },
        { key: 'key-b', tenantId: 'tenant-b' },
      ],
    },
  });
});

afterEach(async () => {
  await server.close();
});

async function seedMaren(key: string) {
  const messages = [
    {
      role: 'user',
      content: "I'm Maren, callsign N0CALL. My buddy Tomas carries the spare antenna.",
      createdAt: '2025-05-28T10:00:00.000Z',
    },
    { role: 'assistant', content: 'Noted, Maren.', createdAt: '2025-05-28T10:00:30.000Z' },
    { role: 'user', content: 'The relay on the ridge is called LARCH-RIDGE.', createdAt: '2025-05-28T10:01:00.000Z' },
    { role: 'assistant', content: 'Noted: relay LARCH-RIDGE.', createdAt: '2025-05-28T10:01:30.000Z' },
  ];
  const response = await server.json('/v1/conversations/node-7/messages', { key, json: { messages, userId: 'maren' } });
  expect(response.status).toBe(201);
  await server.memory.runPendingJobs();
}

describe('knowledge routes', () => {
  it('lists extracted facts, puts one by hand with supersession, and ends one', async () => {
    await seedMaren('key-a');
    const listed = await server.json<FactsBody>('/v1/facts?user_id=maren', { key: 'key-a' });
    expect(listed.status).toBe(200);
    expect(listed.body.facts.map((fact) => `${fact.attribute}=${fact.value}`)).toEqual(
      expect.arrayContaining(['name=Maren', 'callsign=N0CALL']),
    );
    const first = await server.json<FactBody>('/v1/facts', {
      key: 'key-a',
      json: { userId: 'maren', attribute: 'home_town', value: 'Hood River' },
    });
    const second = await server.json<FactBody>('/v1/facts', {
      key: 'key-a',
      json: { userId: 'maren', attribute: 'home_town', value: 'Bend' },
    });
    expect(second.body.fact.value).toBe('Bend');
    const history = await server.json<FactsBody>('/v1/facts?user_id=maren&attribute=home_town&history=true', {
      key: 'key-a',
    });
    expect(history.body.facts.map((fact) => [fact.value, fact.supersededBy])).toEqual([
      ['Hood River', second.body.fact.id],
      ['Bend', undefined],
    ]);
    const asOf = await server.json<FactsBody>(
      `/v1/facts?user_id=maren&attribute=home_town&as_of=${encodeURIComponent(first.body.fact.validFrom)}`,
      { key: 'key-a' },
    );
    expect(asOf.body.facts.map((fact) => fact.value)).toEqual(['Hood River']);
    const ended = await server.json<FactBody>(`/v1/facts/${second.body.fact.id}?user_id=maren`, {
      key: 'key-a',
      method: 'DELETE',
    });
    expect(ended.body.fact.validTo).toBeDefined();
    expect(
      (await server.json(`/v1/facts/${second.body.fact.id}?user_id=maren`, { key: 'key-a', method: 'DELETE' })).status,
    ).toBe(409);
    expect((await server.json('/v1/facts', { key: 'key-a', json: { attribute: 'x' } })).status).toBe(400);
  });

  it('corrects a fact and sets when one expires with PATCH, only for the owner, and puts one that expires', async () => {
    await seedMaren('key-a');
    const town = (
      await server.json<FactBody>('/v1/facts', {
        key: 'key-a',
        json: { userId: 'maren', attribute: 'home_town', value: 'Hood River' },
      })
    ).body.fact;
    const corrected = await server.json<FactBody>(`/v1/facts/${town.id}?user_id=maren`, {
      key: 'key-a',
      method: 'PATCH',
      json: { value: 'Bend', text: 'I live in Bend now' },
    });
    expect(corrected.status).toBe(200);
    expect(corrected.body.fact).toMatchObject({ attribute: 'home_town', value: 'Bend', text: 'I live in Bend now' });
    const history = await server.json<FactsBody>('/v1/facts?user_id=maren&attribute=home_town&history=true', {
      key: 'key-a',
    });
    expect(history.body.facts.map((fact) => [fact.value, fact.supersededBy])).toEqual([
      ['Hood River', corrected.body.fact.id],
      ['Bend', undefined],
    ]);
    // Another tenant, another user: not found; a past expiry hides the fact now; null brings it back.
    expect(
      (
        await server.json(`/v1/facts/${corrected.body.fact.id}?user_id=maren`, {
          key: 'key-b',
          method: 'PATCH',
          json: { expiresAt: null },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await server.json(`/v1/facts/${corrected.body.fact.id}?user_id=tomas`, {
          key: 'key-a',
          method: 'PATCH',
          json: { expiresAt: null },
        })
      ).status,
    ).toBe(404);
    const expired = await server.json<FactBody>(`/v1/facts/${corrected.body.fact.id}?user_id=maren`, {
      key: 'key-a',
      method: 'PATCH',
      json: { expiresAt: '2020-01-01T00:00:00Z' },
    });
    expect(expired.body.fact.expiresAt).toBe('2020-01-01T00:00:00.000Z');
    const current = async () =>
      (await server.json<FactsBody>('/v1/facts?user_id=maren&attribute=home_town', { key: 'key-a' })).body.facts.map(
        (fact) => fact.value,
      );
    expect(await current()).toEqual([]);
    await server.json(`/v1/facts/${corrected.body.fact.id}?user_id=maren`, {
      key: 'key-a',
      method: 'PATCH',
      json: { expiresAt: null },
    });
    expect(await current()).toEqual(['Bend']);
    expect(
      (
        await server.json(`/v1/facts/${town.id}?user_id=maren`, {
          key: 'key-a',
          method: 'PATCH',
          json: { value: 'Salem' },
        })
      ).status,
    ).toBe(409);
    expect(
      (await server.json(`/v1/facts/${town.id}?user_id=maren`, { key: 'key-a', method: 'PATCH', json: {} })).status,
    ).toBe(400);
    const pass = await server.json<FactBody>('/v1/facts', {
      key: 'key-a',
      json: { userId: 'maren', attribute: 'gate_code', value: '4417', expiresAt: '2999-01-01T00:00:00Z' },
    });
    expect(pass.body.fact.expiresAt).toBe('2999-01-01T00:00:00.000Z');
    expect(
      (
        await server.json('/v1/facts', {
          key: 'key-a',
          json: { userId: 'maren', attribute: 'gate_code', value: '1', expiresAt: 'soon' },
        })
      ).status,
    ).toBe(400);
  });

  it('recalls across conversations with explanations, and walks the entity graph', async () => {
    await seedMaren('key-a');
    const recalled = await server.json<{ hits: readonly RecallHit[] }>(
      '/v1/recall?user_id=maren&q=what%20is%20the%20relay%20called&k=3&neighbours=1',
      { key: 'key-a' },
    );
    expect(recalled.status).toBe(200);
    expect(recalled.body.hits[0]!.message.content).toContain('LARCH-RIDGE');
    expect(recalled.body.hits[0]!.explain.keywordRank).toBe(1);
    expect(recalled.body.hits[0]!.neighbours!.length).toBeGreaterThan(0);
    const entities = await server.json<{ entities: readonly Entity[] }>('/v1/entities?user_id=maren&query=tom', {
      key: 'key-a',
    });
    expect(entities.body.entities.map((entity) => entity.name)).toContain('Tomas');
    const around = await server.json<{ relations: readonly Relation[] }>(
      '/v1/entities/Tomas/neighbours?user_id=maren&depth=2',
      {
        key: 'key-a',
      },
    );
    expect(around.status).toBe(200);
    expect(around.body.relations.length).toBeGreaterThan(0);
    expect((await server.json('/v1/entities/Nobody/neighbours?user_id=maren', { key: 'key-a' })).status).toBe(404);
    expect((await server.json('/v1/recall?user_id=maren', { key: 'key-a' })).status).toBe(400);
  });

  it('shows another tenant nothing of a user with the same id', async () => {
    await seedMaren('key-a');
    expect((await server.json<FactsBody>('/v1/facts?user_id=maren', { key: 'key-b' })).body.facts).toEqual([]);
    expect(
      (await server.json<{ hits: unknown[] }>('/v1/recall?user_id=maren&q=relay', { key: 'key-b' })).body.hits,
    ).toEqual([]);
    expect(
      (await server.json<{ entities: unknown[] }>('/v1/entities?user_id=maren', { key: 'key-b' })).body.entities,
    ).toEqual([]);
    expect((await server.json('/v1/entities/Tomas/neighbours?user_id=maren', { key: 'key-b' })).status).toBe(404);
  });
});

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemory, type Fact } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkDirectory, runMnemo } from './run-mnemo.js';

const example = fileURLToPath(new URL('../../../examples/mesh-radio-node-7.jsonl', import.meta.url));
let work: { path: string; remove: () => Promise<void> };

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  await work.remove();
});

/** The bundled mesh-radio chat, then the user's relay switch, stored and extracted as `mnemo serve`'s workers would. */
async function storeMeshChatWithRelaySwitch(db: string): Promise<void> {
  const memory = createMemory({ store: createSqliteStore({ path: db }), worker: { autoStart: false } });
  try {
    const lines = (await readFile(example, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { role: 'user' | 'assistant'; content: string });
    const node = { userId: 'maren', conversationId: 'node-7' };
    await memory.append(
      node,
      lines.map(({ role, content }) => ({ role, content })),
    );
    await memory.append(node, [
      { role: 'user', content: 'update: I switched my main relay to BEAR-CREEK on Bear Butte, id !77aa0012' },
      { role: 'assistant', content: 'Noted: BEAR-CREEK is your main relay now.' },
    ]);
    await memory.runPendingJobs();
  } finally {
    await memory.close();
  }
}

async function facts(args: readonly string[]): Promise<Fact[]> {
  const run = await runMnemo(['facts', ...args, '--db', 'mesh.db', '--json'], { cwd: work.path });
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { facts: Fact[] }).facts;
}

describe('mnemo facts', () => {
  it('shows the switched relay as current and the old one superseded, on the bundled mesh-radio chat', async () => {
    await storeMeshChatWithRelaySwitch(join(work.path, 'mesh.db'));
    const current = await facts(['list', '--user', 'maren', '--attribute', 'main_relay']);
    expect(current.map((fact) => fact.value)).toEqual(['BEAR-CREEK']);
    const history = await facts(['list', '--user', 'maren', '--attribute', 'main_relay', '--history']);
    expect(history.map((fact) => [fact.value, fact.supersededBy === current[0]!.id])).toEqual([
      ['LARCH-RIDGE', true],
      ['BEAR-CREEK', false],
    ]);
    // The table a person reads says the same.
    const table = await runMnemo(
      ['facts', 'list', '--user', 'maren', '--history', '--attribute', 'main_relay', '--db', 'mesh.db'],
      {
        cwd: work.path,
      },
    );
    expect(table.stdout).toMatch(/main_relay\s+LARCH-RIDGE\s+\S+\s+superseded /);
    expect(table.stdout).toMatch(/main_relay\s+BEAR-CREEK\s+\S+\s+current/);
  });

  it('puts, corrects, expires and retires facts through the real CLI, history kept, one user only', async () => {
    await storeMeshChatWithRelaySwitch(join(work.path, 'mesh.db'));
    const [budget] = await facts(['list', '--user', 'maren', '--attribute', 'budget']);
    expect(budget?.value).toBe('120 dollars');

    const [corrected] = await facts([
      'correct',
      budget!.id,
      '150 dollars',
      '--user',
      'maren',
      '--text',
      'my budget is 150 dollars now',
    ]);
    expect(corrected).toMatchObject({
      attribute: 'budget',
      value: '150 dollars',
      text: 'my budget is 150 dollars now',
    });
    expect(
      (await facts(['list', '--user', 'maren', '--attribute', 'budget', '--history'])).map((fact) => fact.value),
    ).toEqual(['120 dollars', '150 dollars']);

    // Expiry: a past time hides the fact from current listings at once; as of a time before it, it was there.
    const [code] = await facts(['put', 'gate_code', '4417', '--user', 'maren', '--expires-at', '2020-06-01T00:00:00Z']);
    expect(code?.expiresAt).toBe('2020-06-01T00:00:00.000Z');
    expect((await facts(['list', '--user', 'maren', '--attribute', 'gate_code'])).length).toBe(0);
    const [again] = await facts(['expire', code!.id, 'never', '--user', 'maren']);
    expect(again?.expiresAt).toBeUndefined();
    expect((await facts(['list', '--user', 'maren', '--attribute', 'gate_code'])).map((fact) => fact.value)).toEqual([
      '4417',
    ]);
    await facts(['expire', code!.id, 'now', '--user', 'maren']);
    expect((await facts(['list', '--user', 'maren', '--attribute', 'gate_code'])).length).toBe(0);
    expect((await facts(['list', '--user', 'maren', '--attribute', 'gate_code', '--history']))[0]).toMatchObject({
      value: '4417',
    });

    const [retired] = await facts(['retire', corrected!.id, '--user', 'maren']);
    expect(retired?.validTo).toBeDefined();
    expect((await facts(['list', '--user', 'maren', '--attribute', 'budget'])).length).toBe(0);

    // Another user, an unknown fact, a bad time: typed errors, nothing written.
    const foreign = await runMnemo(['facts', 'retire', code!.id, '--user', 'bob', '--db', 'mesh.db'], {
      cwd: work.path,
    });
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toMatch(/does not exist/);
    const badTime = await runMnemo(
      ['facts', 'expire', code!.id, 'next tuesday', '--user', 'maren', '--db', 'mesh.db'],
      { cwd: work.path },
    );
    expect(badTime.code).not.toBe(0);
    expect(badTime.stderr).toMatch(/ISO 8601/);
    expect(await facts(['list', '--user', 'bob'])).toEqual([]);
  });

  it('consolidates: a dry run writes nothing, then the vaguer duplicate is merged into the extracted fact', async () => {
    await storeMeshChatWithRelaySwitch(join(work.path, 'mesh.db'));
    const [extracted] = (await facts(['list', '--user', 'maren', '--attribute', 'owns'])).filter((fact) =>
      fact.value.includes('power bank'),
    );
    expect(extracted?.value).toBe('a 10000 mAh power bank');
    const [vague] = await facts(['put', 'owns', 'power bank', '--user', 'maren']);
    const dry = await facts(['consolidate', '--dry-run', '--user', 'maren']);
    expect(dry.map((fact) => fact.id)).toEqual([vague!.id]);
    expect((await facts(['list', '--user', 'maren', '--attribute', 'owns'])).map((fact) => fact.id)).toContain(
      vague!.id,
    );
    const run = await runMnemo(['facts', 'consolidate', '--user', 'maren', '--db', 'mesh.db'], { cwd: work.path });
    expect(run.stdout).toMatch(/^1 duplicates merged and 0 contradictions settled/);
    const owns = await facts(['list', '--user', 'maren', '--attribute', 'owns', '--history']);
    expect(owns.find((fact) => fact.id === vague!.id)).toMatchObject({ supersededBy: extracted!.id });
    expect((await facts(['list', '--user', 'maren', '--attribute', 'owns'])).map((fact) => fact.id)).not.toContain(
      vague!.id,
    );
  });
});

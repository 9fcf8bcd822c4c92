import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, HashedEmbedder } from '@mnemo/core';
import { StaticEmbedder, UseLiteEmbedder } from '@mnemo/models';
import { createSqliteStore } from '@mnemo/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMnemo, startMnemo } from './run-mnemo.js';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mnemo-reembed-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('mnemo reembed', () => {
  it('replaces vectors of another model with the configured one and embeds every message', async () => {
    const transcript = Array.from({ length: 6 }, (_, index) =>
      JSON.stringify({ role: index % 2 === 0 ? 'user' : 'assistant', content: `relay report ${index}` }),
    );
    await writeFile(join(directory, 'chat.jsonl'), `${transcript.join('\n')}\n`);
    const replay = await runMnemo(['replay', 'chat.jsonl', '--db', 'mnemo.db', '--policy', 'token-window', '--json'], {
      cwd: directory,
    });
    expect(replay.code).toBe(0);
    // Vectors of an older model, as a store that switched embedders would hold.
    const store = createSqliteStore({ path: join(directory, 'mnemo.db') });
    const [conversation] = (await store.listConversations({ tenantId: 'default' })).items;
    const scope = { tenantId: 'default', userId: conversation!.userId, conversationId: conversation!.conversationId };
    const old = new HashedEmbedder({ dimensions: 32 });
    const messages = await store.listUnembeddedMessages(scope, old.model, 100);
    const vectors = await old.embed(messages.map((message) => message.content));
    await store.upsertEmbeddings(
      scope,
      old.model,
      messages.map((message, index) => ({ seq: message.seq, vector: vectors[index]! })),
    );
    await store.close();
    const model = new StaticEmbedder().model;

    // The real server says so at start: which model's vectors it holds, and what to run.
    const serveArgs = ['serve', '--db', 'mnemo.db', '--port', '0', '--workers', '0'];
    const warned = await startMnemo(serveArgs, { cwd: directory, ready: /"otherModels"/ });
    warned.child.kill('SIGTERM');
    expect(await warned.exited).toBe(0);
    expect(JSON.parse(warned.ready.input)).toMatchObject({
      level: 40,
      model,
      vectors: 0,
      otherModels: [{ model: old.model, vectors: 6 }],
    });
    expect(warned.ready.input).toContain('mnemo reembed');

    const run = await runMnemo(['reembed', '--db', 'mnemo.db', '--json'], { cwd: directory, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ model, droppedVectors: 6, conversations: 1, embeddedMessages: 6 });
    expect(run.stderr).toContain('"conversationsDone":1');
    const after = createSqliteStore({ path: join(directory, 'mnemo.db'), readonly: true });
    expect(await after.listUnembeddedMessages(scope, model, 100)).toEqual([]);
    expect(await after.listUnembeddedMessages(scope, old.model, 100)).toHaveLength(6);
    await after.close();
    const quiet = await startMnemo(serveArgs, { cwd: directory, ready: /stored vectors: 6/ });
    quiet.child.kill('SIGTERM');
    expect(await quiet.exited).toBe(0);
    expect(JSON.parse(quiet.ready.input)).toMatchObject({ level: 30, model, vectors: 6, otherModels: [] });
    expect(quiet.stdout()).not.toContain('otherModels":[{');
  }, 60_000);

  it('reads a store written with USE-lite vectors after the upgrade without mixing models, and converts it', async () => {
    const path = join(directory, 'mnemo.db');
    const user = { tenantId: 'default', userId: 'maren' };
    const lines = [
      'I planted tomatoes and basil in the garden last weekend.',
      'My sister Ines moved to Lisbon for a job at a bakery.',
      'The relay on the ridge needs a new battery before winter.',
    ];
    // Before the upgrade: USE-lite wrote the vectors (the real bundled model), as the old default did.
    const useLite = new UseLiteEmbedder();
    const before = createMemory({
      store: createSqliteStore({ path }),
      embedder: useLite,
      worker: { autoStart: false },
      compaction: false,
      knowledge: false,
    });
    for (const [index, content] of lines.entries())
      await before.append({ ...user, conversationId: `c${index}` }, [{ role: 'user', content }]);
    expect(await before.runPendingJobs()).toBe(3);
    expect((await before.recall(user, 'vegetables I grow', { k: 1 }))[0]?.explain.vectorRank).toBe(1);
    await before.close();

    // After: the new default embedder on the same file. The USE-lite vectors are never searched with its
    // query vectors (another model, another length): old messages come by keyword only, none by vector.
    const upgraded = new StaticEmbedder();
    const after = createMemory({
      store: createSqliteStore({ path }),
      embedder: upgraded,
      worker: { autoStart: false },
      compaction: false,
      knowledge: false,
    });
    const oldHits = await after.recall(user, 'vegetables I grow in the garden', { k: 3 });
    expect(oldHits.map((hit) => hit.message.content)).toContain(lines[0]);
    expect(oldHits.every((hit) => hit.explain.vectorRank === undefined)).toBe(true);
    // A message appended now gets the new model's vector with it (no job), and is found by vector.
    await after.append({ ...user, conversationId: 'c3' }, [
      { role: 'user', content: 'We harvested courgettes and peppers from our vegetable patch.' },
    ]);
    const fresh = await after.recall(user, 'vegetable patch harvest', { k: 3 });
    expect(fresh.find((hit) => hit.conversationId === 'c3')?.explain.vectorRank).toBe(1);
    expect(fresh.filter((hit) => hit.explain.vectorRank !== undefined).map((hit) => hit.conversationId)).toEqual([
      'c3',
    ]);
    await after.close();

    const run = await runMnemo(['reembed', '--db', 'mnemo.db', '--json'], { cwd: directory, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    // Resumable: c3 already had its vector, so only the three old messages were embedded. The USE-lite
    // vectors stay: beside the static table they are the refiner's (decision 0045). c3, written without a
    // refiner, has none of them: its refine job is queued, for the workers to run while the machine is idle.
    expect(JSON.parse(run.stdout)).toMatchObject({
      model: upgraded.model,
      droppedVectors: 0,
      conversations: 4,
      embeddedMessages: 3,
      refineQueued: 1,
    });
    const kept = createSqliteStore({ path, readonly: true });
    expect(await kept.listUnembeddedMessages({ ...user, conversationId: 'c0' }, useLite.model, 10)).toHaveLength(0);
    const refineJobs = async (conversationId: string) =>
      (await kept.listJobs({ ...user, conversationId })).filter((job) => job.kind === 'refine');
    expect(await refineJobs('c0')).toEqual([]);
    expect((await refineJobs('c3')).map((job) => job.status)).toEqual(['pending']);
    await kept.close();
    // A second run queues it again, but the pending job is kept, not doubled.
    const again = await runMnemo(['reembed', '--db', 'mnemo.db'], { cwd: directory, timeoutMs: 60_000 });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('1 conversations queued for the refiner');
    const once = createSqliteStore({ path, readonly: true });
    expect(
      (await once.listJobs({ ...user, conversationId: 'c3' })).filter((job) => job.kind === 'refine'),
    ).toHaveLength(1);
    await once.close();
    // Without a refiner they are another model's, and go.
    const withoutRefiner = await runMnemo(['reembed', '--db', 'mnemo.db', '--json'], {
      cwd: directory,
      env: { MNEMO_REFINER: 'none' },
      timeoutMs: 60_000,
    });
    expect(JSON.parse(withoutRefiner.stdout)).toMatchObject({
      droppedVectors: 3,
      embeddedMessages: 0,
      refineQueued: 0,
    });
    const converted = createMemory({
      store: createSqliteStore({ path }),
      embedder: upgraded,
      worker: { autoStart: false },
      compaction: false,
      knowledge: false,
    });
    const hits = await converted.recall(user, 'vegetables I grow in the garden', { k: 4 });
    expect(
      hits
        .filter((hit) => hit.explain.vectorRank !== undefined)
        .map((hit) => hit.conversationId)
        .sort(),
    ).toEqual(['c0', 'c1', 'c2', 'c3']);
    await converted.close();
    const store = createSqliteStore({ path, readonly: true });
    expect(await store.listUnembeddedMessages({ ...user, conversationId: 'c0' }, useLite.model, 10)).toHaveLength(1);
    await store.close();
  }, 60_000);

  it('refuses without an embedder or a database', async () => {
    expect((await runMnemo(['reembed', '--db', 'missing.db'], { cwd: directory })).code).toBe(2);
    const none = await runMnemo(['reembed', '--db', 'missing.db'], { cwd: directory, env: { MNEMO_EMBEDDER: 'none' } });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('needs an embedder');
  });
});

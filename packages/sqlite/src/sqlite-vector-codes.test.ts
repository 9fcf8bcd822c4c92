import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeNewMessage } from '@mnemo/core/testing';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateSqliteSchema, readSqliteSchemaVersion, sqliteMigrations } from './sqlite-migrations.js';
import { createSqliteStore } from './sqlite-store.js';
import { binaryCandidates, signCode } from '@mnemo/core/store-kit';

const user = { tenantId: 'tenant-a', userId: 'user-1' };
const scope = { ...user, conversationId: 'conv-1' };

/** Deterministic vectors with both signs in every dimension (a xorshift generator). */
function vectors(count: number, dimensions: number, seed: number): Float32Array[] {
  let state = seed;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return ((state >>> 0) / 4294967296) * 2 - 1;
  };
  return Array.from({ length: count }, () => Float32Array.from({ length: dimensions }, next));
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let index = 0; index < a.length; index += 1) {
    dot += a[index]! * b[index]!;
    normA += a[index]! ** 2;
    normB += b[index]! ** 2;
  }
  return dot / Math.sqrt(normA * normB);
}

/** Seqs (1-based) of `stored` ordered by exact cosine similarity to `query`, best first. */
function exactOrder(stored: readonly Float32Array[], query: Float32Array, k: number): number[] {
  return stored
    .map((vector, index) => ({ seq: index + 1, similarity: cosine(vector, query) }))
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, k)
    .map((entry) => entry.seq);
}

describe('binary-quantized vector search (SQLite)', () => {
  let directory: string;
  let path: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'mnemo-sqlite-vector-codes-'));
    path = join(directory, 'mnemo.db');
  });
  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it("moves a version-5 file's float vectors into message_vectors and still finds the exact nearest messages when it migrates", async () => {
    // 12 dimensions: not a whole number of bytes, so the codes are padded.
    const stored = vectors(binaryCandidates(5), 12, 7);
    const raw = new Database(path);
    sqliteVec.load(raw);
    migrateSqliteSchema(raw, { migrations: sqliteMigrations.slice(0, 5) });
    raw
      .prepare(
        'INSERT INTO conversations (tenant_id, user_id, conversation_id, created_at, updated_at, message_count, total_tokens) VALUES (?, ?, ?, 0, 0, ?, 0)',
      )
      .run(scope.tenantId, scope.userId, scope.conversationId, stored.length);
    raw.exec(`INSERT INTO embedding_models (id, model, dimensions) VALUES (1, 'legacy', 12);
      CREATE VIRTUAL TABLE vectors_1 USING vec0(tenant_id text partition key, user_id text partition key,
        conversation_id text, created_at integer, embedding float[12] distance_metric=cosine)`);
    const insertMessage = raw.prepare(
      `INSERT INTO messages (id, tenant_id, user_id, conversation_id, seq, role, content, created_at, tokens) VALUES (?, ?, ?, ?, ?, 'user', ?, ?, 1)`,
    );
    const insertVector = raw.prepare(
      'INSERT INTO vectors_1 (rowid, tenant_id, user_id, conversation_id, created_at, embedding) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const insertEmbedding = raw.prepare('INSERT INTO message_embeddings VALUES (1, ?, ?, ?, ?)');
    stored.forEach((vector, index) => {
      const rowid = Number(
        insertMessage.run(
          `m${index}`,
          scope.tenantId,
          scope.userId,
          scope.conversationId,
          index + 1,
          `message ${index + 1}`,
          index,
        ).lastInsertRowid,
      );
      insertVector.run(
        BigInt(rowid),
        scope.tenantId,
        scope.userId,
        scope.conversationId,
        BigInt(index),
        Buffer.from(vector.buffer),
      );
      insertEmbedding.run(rowid, scope.tenantId, scope.userId, scope.conversationId);
    });
    raw.close();

    const store = createSqliteStore({ path });
    try {
      const [query] = vectors(1, 12, 99);
      const hits = await store.searchVector(user, 'legacy', query!, { k: 5 });
      expect(hits.map((hit) => hit.message.seq)).toEqual(exactOrder(stored, query!, 5));
      expect(hits[0]!.score).toBeCloseTo(cosine(stored[hits[0]!.message.seq - 1]!, query!), 5);
      expect(await store.listUnembeddedMessages(scope, 'legacy', 10)).toEqual([]);
      expect(await store.deleteEmbeddings({ tenantId: scope.tenantId })).toBe(stored.length);
      expect(await store.searchVector(user, 'legacy', query!, { k: 5 })).toEqual([]);
    } finally {
      await store.close();
    }
    const check = new Database(path, { readonly: true });
    try {
      expect(readSqliteSchemaVersion(check)).toBe(sqliteMigrations.length);
      const tables = (
        check.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
      ).map((row) => row.name);
      expect(tables).toContain('message_vectors');
      expect(
        tables.filter(
          (name) => name.startsWith('vector_codes_') || name.startsWith('vectors_') || name === 'message_embeddings',
        ),
      ).toEqual([]);
    } finally {
      check.close();
    }
  });

  it("recomputes a version-10 file's codes of short vectors as 512 projected bits, leaves wider models' codes, and finds the nearest", async () => {
    const small = vectors(300, 64, 5);
    const wide = vectors(300, 512, 6);
    const store = createSqliteStore({ path });
    await store.appendMessages(
      scope,
      small.map((_, index) => makeNewMessage(`message ${index + 1}`)),
    );
    await store.upsertEmbeddings(
      scope,
      'small',
      small.map((vector, index) => ({ seq: index + 1, vector })),
    );
    await store.upsertEmbeddings(
      scope,
      'wide',
      wide.map((vector, index) => ({ seq: index + 1, vector })),
    );
    await store.close();
    // As version 10 stored them: a 64-dimension vector's code was its 64 signs (8 bytes).
    const raw = new Database(path);
    const codesOf = (database: Database.Database, model: string) =>
      (
        database
          .prepare(
            'SELECT v.code FROM message_vectors v JOIN embedding_models m ON m.id = v.model_id WHERE m.model = ? ORDER BY v.message_rowid',
          )
          .raw(true)
          .all(model) as [Buffer][]
      ).map(([code]) => Buffer.from(code));
    const wideCodes = codesOf(raw, 'wide');
    const signsOnly = (vector: Float32Array) => {
      const words = new Uint32Array(2);
      vector.forEach((value, index) => {
        if (value > 0) words[index >>> 5]! |= 1 << (index & 31);
      });
      return Buffer.from(words.buffer);
    };
    const update = raw.prepare(
      `UPDATE message_vectors SET code = ? WHERE model_id = (SELECT id FROM embedding_models WHERE model = 'small')
       AND message_rowid = (SELECT rowid FROM messages WHERE seq = ?)`,
    );
    small.forEach((vector, index) => update.run(signsOnly(vector), index + 1));
    raw.pragma('user_version = 10');
    raw.close();

    const migrated = createSqliteStore({ path });
    try {
      // A query near message 123's vector finds it first among 300, through a shortlist of 2·k codes.
      const query = small[122]!.map((value, index) => value + (index % 5 === 0 ? 0.05 : 0));
      const hits = await migrated.searchVector(user, 'small', query, { k: 3 });
      expect(hits[0]?.message.seq).toBe(123);
    } finally {
      await migrated.close();
    }
    const check = new Database(path, { readonly: true });
    try {
      expect(readSqliteSchemaVersion(check)).toBe(sqliteMigrations.length);
      expect(codesOf(check, 'small')).toEqual(small.map((vector) => Buffer.from(signCode(vector).buffer)));
      expect(codesOf(check, 'small').every((code) => code.length === 64)).toBe(true);
      expect(codesOf(check, 'wide')).toEqual(wideCodes);
    } finally {
      check.close();
    }
  });

  it('ranks by exact cosine similarity when the user has no more vectors than the candidates', async () => {
    const k = 4;
    const stored = vectors(binaryCandidates(k), 64, 3);
    const store = createSqliteStore({ path });
    try {
      await store.appendMessages(
        scope,
        stored.map((_, index) => makeNewMessage(`message ${index + 1}`)),
      );
      await store.upsertEmbeddings(
        scope,
        'model',
        stored.map((vector, index) => ({ seq: index + 1, vector })),
      );
      for (const query of vectors(5, 64, 11)) {
        const hits = await store.searchVector(user, 'model', query, { k });
        expect(hits.map((hit) => hit.message.seq)).toEqual(exactOrder(stored, query, k));
      }
    } finally {
      await store.close();
    }
  });

  it("finds a stored vector first, and only the asking user's, when the user has many more vectors than the candidates", async () => {
    const stored = vectors(600, 64, 5);
    const store = createSqliteStore({ path });
    try {
      const other = { ...scope, userId: 'user-2' };
      for (const target of [scope, other]) {
        await store.appendMessages(
          target,
          stored.map((_, index) => makeNewMessage(`message ${index + 1}`)),
        );
        await store.upsertEmbeddings(
          target,
          'model',
          stored.map((vector, index) => ({ seq: index + 1, vector })),
        );
      }
      for (const seq of [1, 250, 600]) {
        const hits = await store.searchVector(user, 'model', stored[seq - 1]!, { k: 3 });
        expect(hits[0]!.message.seq).toBe(seq);
        expect(hits[0]!.score).toBeCloseTo(1, 5);
        expect(
          hits.every(
            (hit) => hit.conversationId === scope.conversationId && hit.message.content.startsWith('message '),
          ),
        ).toBe(true);
      }
      expect(await store.deleteEmbeddings({ tenantId: scope.tenantId, userId: 'user-2' })).toBe(600);
      expect((await store.searchVector(user, 'model', stored[0]!, { k: 3 }))[0]!.message.seq).toBe(1);
      expect(await store.searchVector({ ...user, userId: 'user-2' }, 'model', stored[0]!, { k: 3 })).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("keeps a second connection's copy of the codes in step with what another connection adds, re-embeds and erases", async () => {
    const stored = vectors(300, 32, 21);
    const writer = createSqliteStore({ path });
    const reader = createSqliteStore({ path });
    try {
      await writer.appendMessages(
        scope,
        stored.map((_, index) => makeNewMessage(`message ${index + 1}`)),
      );
      await writer.upsertEmbeddings(
        scope,
        'model',
        stored.slice(0, 200).map((vector, index) => ({ seq: index + 1, vector })),
      );
      // The reader reads the codes once here; then only what changed.
      expect((await reader.searchVector(user, 'model', stored[10]!, { k: 3 }))[0]!.message.seq).toBe(11);
      expect((await reader.searchVector(user, 'model', stored[250]!, { k: 3 }))[0]!.message.seq).not.toBe(251);

      await writer.upsertEmbeddings(
        scope,
        'model',
        stored.slice(200).map((vector, index) => ({ seq: 201 + index, vector })),
      );
      const added = (await reader.searchVector(user, 'model', stored[250]!, { k: 3 }))[0]!;
      expect([added.message.seq, added.score]).toEqual([251, expect.closeTo(1, 5)]);

      // Message 11 embedded again with the same vector: one hit, not one per code the reader has seen.
      await writer.upsertEmbeddings(scope, 'model', [{ seq: 11, vector: stored[10]! }]);
      expect(
        (await reader.searchVector(user, 'model', stored[10]!, { k: 3 })).filter((hit) => hit.message.seq === 11),
      ).toHaveLength(1);
      // Message 11 gets message 251's vector: the reader's copy must drop 11's old code.
      await writer.upsertEmbeddings(scope, 'model', [{ seq: 11, vector: stored[250]! }]);
      expect(
        (await reader.searchVector(user, 'model', stored[10]!, { k: 3 })).map((hit) => hit.message.seq),
      ).not.toContain(11);
      expect(
        (await reader.searchVector(user, 'model', stored[250]!, { k: 2 }))
          .map((hit) => hit.message.seq)
          .sort((a, b) => a - b),
      ).toEqual([11, 251]);

      // Another user's codes are another copy; erasing the first user's conversation empties theirs.
      const other = { ...scope, userId: 'user-2' };
      await writer.appendMessages(other, [makeNewMessage('other user')]);
      await writer.upsertEmbeddings(other, 'model', [{ seq: 1, vector: stored[250]! }]);
      expect(
        (await reader.searchVector({ ...user, userId: 'user-2' }, 'model', stored[250]!, { k: 3 })).map(
          (hit) => hit.message.content,
        ),
      ).toEqual(['other user']);
      await writer.deleteConversation(scope);
      expect(await reader.searchVector(user, 'model', stored[250]!, { k: 3 })).toEqual([]);
      // Messages appended after the erase get rowids the erased ones may have had: never the old codes.
      await writer.appendMessages(scope, [makeNewMessage('after the erase')]);
      expect(await reader.searchVector(user, 'model', stored[250]!, { k: 3 })).toEqual([]);
      await writer.upsertEmbeddings(scope, 'model', [{ seq: 1, vector: stored[0]! }]);
      expect(
        (await reader.searchVector(user, 'model', stored[0]!, { k: 3 })).map((hit) => hit.message.content),
      ).toEqual(['after the erase']);

      // Erasing user-2 leaves no row that names them, and the reader's copy of them is read afresh.
      await writer.deleteUser({ tenantId: scope.tenantId, userId: 'user-2' });
      expect(await reader.searchVector({ ...user, userId: 'user-2' }, 'model', stored[250]!, { k: 3 })).toEqual([]);
      await writer.appendMessages(other, [makeNewMessage('user-2 again')]);
      await writer.upsertEmbeddings(other, 'model', [{ seq: 1, vector: stored[250]! }]);
      expect(
        (await reader.searchVector({ ...user, userId: 'user-2' }, 'model', stored[250]!, { k: 3 })).map(
          (hit) => hit.message.content,
        ),
      ).toEqual(['user-2 again']);
      await writer.deleteUser({ tenantId: scope.tenantId, userId: 'user-2' });
      const raw = new Database(path, { readonly: true });
      try {
        const named = raw
          .prepare(
            "SELECT (SELECT count(*) FROM vector_deletions WHERE user_id = 'user-2') + (SELECT count(*) FROM message_vectors WHERE user_id = 'user-2') AS n",
          )
          .get() as { n: number };
        expect(named.n).toBe(0);
      } finally {
        raw.close();
      }
    } finally {
      await reader.close();
      await writer.close();
    }
  });
});

describe('the first vector search of a large user (SQLite)', () => {
  it('reads the codes a page at a time, giving the event loop a turn between pages, and finds the same hits as a warm search', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'mnemo-sqlite-vector-pages-'));
    const path = join(directory, 'mnemo.db');
    const stored = vectors(12_000, 64, 17);
    const writer = createSqliteStore({ path });
    const reader = createSqliteStore({ path });
    try {
      await writer.appendMessages(
        scope,
        stored.map((_, index) => makeNewMessage(`message ${index + 1}`)),
      );
      await writer.upsertEmbeddings(
        scope,
        'model',
        stored.map((vector, index) => ({ seq: index + 1, vector })),
      );
      let turns = 0;
      const ticking = setInterval(() => (turns += 1), 0);
      let cold: Awaited<ReturnType<typeof reader.searchVector>>;
      try {
        cold = await reader.searchVector(user, 'model', stored[4_321]!, { k: 5 });
      } finally {
        clearInterval(ticking);
      }
      // 12,000 rows are three pages: the loop turned while they were read (a synchronous read would not let the timer run).
      expect(turns).toBeGreaterThanOrEqual(1);
      expect(cold[0]!.message.seq).toBe(4_322);
      const warm = await reader.searchVector(user, 'model', stored[4_321]!, { k: 5 });
      expect(warm.map((hit) => hit.message.seq)).toEqual(cold.map((hit) => hit.message.seq));
    } finally {
      await reader.close();
      await writer.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeNewMessage } from '@mnemo/core/testing';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateSqliteSchema, readSqliteSchemaVersion, sqliteMigrations } from './sqlite-migrations.js';
import { createSqliteStore } from './sqlite-store.js';

const user = { tenantId: 'tenant-a', userId: 'user-1' };
const scope = { ...user, conversationId: 'conv-1' };

describe('keyword search on the in-memory index (SQLite)', () => {
  let directory: string;
  let path: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'mnemo-sqlite-keyword-'));
    path = join(directory, 'mnemo.db');
  });
  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('migrates a version-7 file: the FTS5 index goes, and its messages are found by keyword, stemmed', async () => {
    const raw = new Database(path);
    sqliteVec.load(raw);
    migrateSqliteSchema(raw, { migrations: sqliteMigrations.slice(0, 7) });
    raw
      .prepare(
        'INSERT INTO conversations (tenant_id, user_id, conversation_id, created_at, updated_at, message_count, total_tokens) VALUES (?, ?, ?, 0, 0, 3, 3)',
      )
      .run(scope.tenantId, scope.userId, scope.conversationId);
    const insert = raw.prepare(
      `INSERT INTO messages (id, tenant_id, user_id, conversation_id, seq, role, content, created_at, tokens) VALUES (?, ?, ?, ?, ?, 'user', ?, ?, 1)`,
    );
    ['the antennas are up on the summit', 'battery at 3.9 volts', 'another antenna for the relay'].forEach(
      (content, index) =>
        insert.run(`m${index}`, scope.tenantId, scope.userId, scope.conversationId, index + 1, content, index),
    );
    raw.close();
    const store = createSqliteStore({ path });
    try {
      expect((await store.searchKeyword(user, ['antenna'], { k: 5 })).map((hit) => hit.message.seq).sort()).toEqual([
        1, 3,
      ]);
      expect(
        (await store.searchKeyword(user, ['volts', 'relay'], { k: 5 })).map((hit) => hit.message.seq).sort(),
      ).toEqual([2, 3]);
    } finally {
      await store.close();
    }
    const check = new Database(path, { readonly: true });
    try {
      expect(readSqliteSchemaVersion(check)).toBe(sqliteMigrations.length);
      const names = (check.prepare('SELECT name FROM sqlite_master').all() as { name: string }[]).map(
        (row) => row.name,
      );
      expect(names.filter((name) => name.startsWith('messages_fts'))).toEqual([]);
      expect(names).toEqual(expect.arrayContaining(['message_deletions', 'messages_user_rowid', 'messages_deleted']));
    } finally {
      check.close();
    }
  });

  it("sees another process's appends, deletions and erasures on its next search, and never shows one user another's messages", async () => {
    const searcher = createSqliteStore({ path });
    const writer = createSqliteStore({ path });
    const other = { ...user, userId: 'user-2' };
    try {
      await writer.appendMessages(scope, [makeNewMessage('the antenna is on the roof'), makeNewMessage('battery low')]);
      await writer.appendMessages({ ...other, conversationId: 'conv-9' }, [
        makeNewMessage('my antenna broke, antenna antenna'),
      ]);
      const contents = async (who = user) =>
        (await searcher.searchKeyword(who, ['antenna'], { k: 10 })).map((hit) => hit.message.content);
      expect(await contents()).toEqual(['the antenna is on the roof']);
      await writer.appendMessages({ ...scope, conversationId: 'conv-2' }, [makeNewMessage('new antenna mast')]);
      expect(await contents()).toEqual(['new antenna mast', 'the antenna is on the roof']);
      await searcher.deleteConversation({ ...scope, conversationId: 'conv-2' });
      expect(await contents()).toEqual(['the antenna is on the roof']);
      await writer.deleteConversation(scope);
      expect(await contents()).toEqual([]);
      await writer.appendMessages(scope, [makeNewMessage('antenna again, after the delete')]);
      expect(await contents()).toEqual(['antenna again, after the delete']);
      // Erasing the user and writing new messages under the same id: only the new ones are found.
      await writer.deleteUser(user);
      await writer.appendMessages(scope, [makeNewMessage('a fresh antenna story')]);
      expect(await contents()).toEqual(['a fresh antenna story']);
      expect(await contents(other)).toEqual(['my antenna broke, antenna antenna']);
      const raw = new Database(path, { readonly: true });
      try {
        // No deletion count names the erased user (their new messages have not been deleted).
        expect(raw.prepare('SELECT count(*) AS n FROM message_deletions WHERE user_id = ?').get(user.userId)).toEqual({
          n: 0,
        });
      } finally {
        raw.close();
      }
    } finally {
      await writer.close();
      await searcher.close();
    }
  });

  it("reads a large user's messages a page at a time, giving the event loop a turn between pages, and finds the same hits warm", async () => {
    const writer = createSqliteStore({ path });
    const reader = createSqliteStore({ path });
    try {
      await writer.appendMessages(
        scope,
        Array.from({ length: 7000 }, (_, index) =>
          makeNewMessage(
            `status report ${index + 1} from node ${index % 97}${index === 4321 ? ' with the rare lightning word' : ''}`,
          ),
        ),
      );
      let turns = 0;
      const ticking = setInterval(() => (turns += 1), 0);
      let cold: Awaited<ReturnType<typeof reader.searchKeyword>>;
      try {
        cold = await reader.searchKeyword(user, ['lightning', 'node'], { k: 5 });
      } finally {
        clearInterval(ticking);
      }
      // 7,000 messages are four pages: the loop turned while they were read and indexed.
      expect(turns).toBeGreaterThanOrEqual(1);
      expect(cold[0]!.message.seq).toBe(4322);
      const warm = await reader.searchKeyword(user, ['lightning', 'node'], { k: 5 });
      expect(warm.map((hit) => hit.message.seq)).toEqual(cold.map((hit) => hit.message.seq));
      expect(await reader.searchKeyword(user, ['lightning'], { k: 5, conversationIds: ['elsewhere'] })).toEqual([]);
      expect(await reader.searchKeyword(user, ['lightning'], { k: 5, since: '2999-01-01T00:00:00.000Z' })).toEqual([]);
    } finally {
      await reader.close();
      await writer.close();
    }
  });
});

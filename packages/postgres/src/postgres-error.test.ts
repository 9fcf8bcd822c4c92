import { isMemoryError, MemoryError, type Scope } from '@mnemo/core';
import { makeNewMessage } from '@mnemo/core/testing';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { PostgresClient, PostgresPool } from './postgres-driver.js';
import { toPostgresError } from './postgres-error.js';
import { PostgresStore } from './postgres-store.js';
import { runInTransaction } from './postgres-transaction.js';

function driverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

// A pool whose every statement fails with the given error, as a dying server or a held lock would; it
// records the statements sent and how each connection was given back.
function failingPool(error: Error, options: { failOn?: (text: string) => boolean } = {}) {
  const sent: string[] = [];
  const released: (Error | boolean | undefined)[] = [];
  const query = async (text: string) => {
    sent.push(text);
    if (options.failOn === undefined || options.failOn(text)) throw error;
    return { rows: [], rowCount: 0 };
  };
  const events = new EventEmitter();
  const client: PostgresClient = {
    query,
    release: (destroy) => void released.push(destroy),
    on: (event, listener) => events.on(event, listener),
    removeListener: (event, listener) => events.removeListener(event, listener),
  };
  const pool: PostgresPool = {
    query,
    connect: async () => client,
    end: async () => undefined,
    on: () => undefined,
  };
  return { pool, sent, released, events };
}

const scope: Scope = { tenantId: 'tenant-a', userId: 'user-1', conversationId: 'conv-1' };

describe('toPostgresError', () => {
  it.each([
    ['40001', 'could not serialize access due to concurrent update'],
    ['40P01', 'deadlock detected'],
    ['55P03', 'canceling statement due to lock timeout'],
    ['57014', 'canceling statement due to statement timeout'],
    ['57P01', 'terminating connection due to administrator command'],
    ['08006', 'connection failure'],
    ['53300', 'sorry, too many clients already'],
  ])('maps SQLSTATE %s to retryable unavailable with the driver error as cause', (code, message) => {
    const cause = driverError(code, message);
    expect(toPostgresError(cause, 'appending messages')).toMatchObject({
      code: 'unavailable',
      cause,
      details: { sqlState: code, retryable: true },
    });
  });

  it('maps a full disk of the server to unavailable that says so and asks for a later retry', () => {
    const cause = driverError('53100', 'could not extend file: No space left on device');
    expect(toPostgresError(cause, 'appending messages')).toMatchObject({
      code: 'unavailable',
      cause,
      details: { sqlState: '53100', reason: 'disk_full', retryAfterSeconds: 30 },
    });
    expect(toPostgresError(cause, 'appending messages').message).toMatch(/disk of the PostgreSQL server is full/);
  });

  it('maps a refused or dropped connection to retryable unavailable', () => {
    const refused = driverError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432');
    expect(toPostgresError(refused, 'reading')).toMatchObject({
      code: 'unavailable',
      cause: refused,
      details: { networkCode: 'ECONNREFUSED' },
    });
    const dropped = new Error('Connection terminated unexpectedly');
    expect(toPostgresError(dropped, 'reading')).toMatchObject({ code: 'unavailable', cause: dropped });
  });

  it('maps text PostgreSQL cannot store to invalid_input', () => {
    const cause = driverError('22021', 'invalid byte sequence for encoding "UTF8": 0x00');
    expect(toPostgresError(cause, 'appending messages')).toMatchObject({
      code: 'invalid_input',
      cause,
      details: { sqlState: '22021' },
    });
  });

  it('maps any other driver error to storage_failed keeping the message, SQLSTATE and cause, and passes MemoryErrors through', () => {
    const cause = driverError('42P01', 'relation "mnemo.messages" does not exist');
    const error = toPostgresError(cause, 'listing messages');
    expect(error).toMatchObject({ code: 'storage_failed', cause, details: { sqlState: '42P01' } });
    expect(error.message).toBe('listing messages failed: relation "mnemo.messages" does not exist');
    expect(toPostgresError('boom', 'x')).toMatchObject({ code: 'storage_failed', message: 'x failed: boom' });
    const own = new MemoryError('conflict', 'taken');
    expect(toPostgresError(own, 'x')).toBe(own);
  });
});

describe('PostgresStore on a failing connection', () => {
  it('reports a storage failure instead of empty history, for every kind of read', async () => {
    const cause = driverError('XX001', 'could not read block 7 in file "base/16384/16385": read only 0 of 8192 bytes');
    const store = new PostgresStore(failingPool(cause).pool);
    const user = { tenantId: scope.tenantId, userId: scope.userId };
    const reads: Promise<unknown>[] = [
      store.listMessages(scope),
      store.getConversation(scope),
      store.listConversations({ tenantId: scope.tenantId }),
      store.getUsageTotals(scope),
      store.listSummaries(scope),
      store.listJobs(scope),
      store.listMemoryFiles(user, '/memories'),
      store.searchKeyword(user, ['relay'], { k: 5 }),
      store.listFacts(user),
      store.getCursor(scope, 'facts'),
    ];
    for (const read of reads) {
      await expect(read).rejects.toSatisfy(
        (error: unknown) => isMemoryError(error, 'storage_failed') && error.cause === cause,
      );
    }
  });

  it('rolls back a failed append and gives the connection back', async () => {
    const cause = driverError('40P01', 'deadlock detected');
    const { pool, sent, released } = failingPool(cause, { failOn: (text) => text.includes('FOR UPDATE') });
    const store = new PostgresStore(pool);
    await expect(store.appendMessages(scope, [makeNewMessage('hello')])).rejects.toSatisfy(
      (error: unknown) => isMemoryError(error, 'unavailable') && error.cause === cause,
    );
    expect(sent[0]).toBe('BEGIN');
    expect(sent.at(-1)).toBe('ROLLBACK');
    expect(sent).not.toContain('COMMIT');
    expect(released).toEqual([undefined]);
  });
});

describe('runInTransaction', () => {
  it('discards a connection whose ROLLBACK failed and still reports the error that failed the transaction', async () => {
    const lost = new Error('Connection terminated unexpectedly');
    const { pool, released } = failingPool(lost, { failOn: (text) => text === 'ROLLBACK' });
    const original = new Error('the body failed');
    await expect(
      runInTransaction(pool, async () => {
        throw original;
      }),
    ).rejects.toBe(original);
    expect(released).toEqual([lost]);
  });

  it('listens for the error event of its connection while it holds it, and discards a connection that reported one', async () => {
    const terminated = driverError('57P01', 'terminating connection due to administrator command');
    const { pool, released, events } = failingPool(terminated, { failOn: () => false });
    // Between two statements the server restarts: pg reports it as an event on the checked-out connection,
    // which ends the process when nobody listens.
    await runInTransaction(pool, async () => {
      expect(events.listenerCount('error')).toBe(1);
      events.emit('error', terminated);
    });
    expect(events.listenerCount('error')).toBe(0);
    expect(released).toEqual([terminated]);
    expect(() => events.emit('error', terminated)).toThrow();
  });
});

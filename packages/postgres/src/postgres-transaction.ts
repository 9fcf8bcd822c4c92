import type { PostgresClient, PostgresPool } from './postgres-driver.js';

/** A connection checked out of the pool, with an `error` listener for as long as it is held. */
export interface HeldClient {
  readonly client: PostgresClient;
  /** The error the connection reported while held (a server restart, a dropped socket), if any. */
  readonly lost: () => Error | undefined;
  /** Returns the connection; a connection that reported an error (or is given one) is discarded by the pool. */
  release(error?: Error): void;
}

/**
 * Checks a connection out of the pool and listens for its `error` event until it is released: pg's pool
 * removes its own listener while a connection is checked out, so without this a server restart between
 * two statements of a transaction ends the process ("Unhandled 'error' event", issue 20). The statement
 * then in flight, or the next one, fails on its own and the caller's error handling runs as usual.
 */
export async function checkOutClient(pool: PostgresPool): Promise<HeldClient> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error) => {
    lost ??= error;
  };
  client.on('error', onError);
  let released = false;
  return {
    client,
    lost: () => lost,
    release(error) {
      if (released) return;
      released = true;
      client.removeListener('error', onError);
      client.release(error ?? lost);
    },
  };
}

/**
 * Runs `body` in one transaction on one pooled connection: `BEGIN`, then `COMMIT` when it returns or
 * `ROLLBACK` when it throws (the original error is rethrown). Isolation is PostgreSQL's default, READ
 * COMMITTED: callers that need a stable view lock the rows they depend on (`SELECT … FOR UPDATE`), or
 * pass another `begin` statement (`BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY` for one snapshot).
 * A connection lost on the way fails the call (the store maps it to `unavailable`) and is discarded.
 */
export async function runInTransaction<T>(
  pool: PostgresPool,
  body: (client: PostgresClient) => Promise<T>,
  options: { readonly begin?: string } = {},
): Promise<T> {
  const held = await checkOutClient(pool);
  const { client } = held;
  try {
    await client.query(options.begin ?? 'BEGIN');
  } catch (error) {
    held.release(asError(error));
    throw error;
  }
  let broken: Error | undefined;
  try {
    const result = await body(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      // The connection is unusable (the server went away mid-transaction): the pool must not hand it out
      // again. The caller still gets the error that failed the transaction, not this one.
      broken = asError(rollbackError);
    }
    throw error;
  } finally {
    held.release(broken);
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

import type { PostgresClient, PostgresPool } from './postgres-driver.js';

/**
 * Runs `body` in one transaction on one pooled connection: `BEGIN`, then `COMMIT` when it returns or
 * `ROLLBACK` when it throws (the original error is rethrown). Isolation is PostgreSQL's default, READ
 * COMMITTED: callers that need a stable view lock the rows they depend on (`SELECT … FOR UPDATE`), or
 * pass another `begin` statement (`BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY` for one snapshot).
 */
export async function runInTransaction<T>(pool: PostgresPool, body: (client: PostgresClient) => Promise<T>, options: { readonly begin?: string } = {}): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(options.begin ?? 'BEGIN');
  } catch (error) {
    client.release(asError(error));
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
    client.release(broken);
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

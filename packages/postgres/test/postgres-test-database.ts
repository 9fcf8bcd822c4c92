// Where the PostgreSQL tests get their database, and how each test gets a schema of its own.
// MNEMO_TEST_DATABASE_URL names a database the tests may create and drop schemas in (see the README).
// Without it the tests are skipped with a visible reason, unless MNEMO_REQUIRE_POSTGRES=1 (as in CI),
// which turns the missing database into a failing test.
import { describe, it } from 'vitest';
import pg from 'pg';

/** The URL of the test database, or `undefined` when none is configured. */
export const testDatabaseUrl = process.env['MNEMO_TEST_DATABASE_URL']?.trim() || undefined;

const required = process.env['MNEMO_REQUIRE_POSTGRES'] === '1';
const setupHint =
  'set MNEMO_TEST_DATABASE_URL=postgres://user:password@127.0.0.1:5432/database (see packages/postgres/README.md)';
let skipNoted = false;

/**
 * Declares a suite that needs PostgreSQL: run against `testDatabaseUrl`; skipped with the reason in its
 * title and a console note when there is none; failing with a clear message when one is required.
 */
export function describeWithPostgres(name: string, body: (url: string) => void): void {
  if (testDatabaseUrl !== undefined) {
    describe(name, () => body(testDatabaseUrl));
    return;
  }
  if (required) {
    describe(name, () => {
      it('has a PostgreSQL database to test against', () => {
        throw new Error(`MNEMO_REQUIRE_POSTGRES=1 but MNEMO_TEST_DATABASE_URL is not set: ${setupHint}`);
      });
    });
    return;
  }
  if (!skipNoted) {
    skipNoted = true;
    console.warn(`[@mnemo/postgres] PostgreSQL tests skipped: MNEMO_TEST_DATABASE_URL is not set; ${setupHint}`);
  }
  describe.skip(`${name} (skipped: MNEMO_TEST_DATABASE_URL is not set)`, () => body('postgres://unset'));
}

/** Fresh schemas for tests, each dropped (with everything in it) by `dropAll`. */
export interface TestSchemas {
  /** A new, unused schema name; nothing is created until a store or migration uses it. */
  fresh(): string;
  /** Drops every schema handed out since the last call. */
  dropAll(): Promise<void>;
  /** Ends the connection used for dropping. */
  close(): Promise<void>;
  /** A plain connection pool on the test database, for the tests' own SQL. */
  readonly pool: pg.Pool;
}

let counter = 0;

/** Creates the schema bookkeeping of one test file. */
export function createTestSchemas(url: string): TestSchemas {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined);
  const handedOut: string[] = [];
  return {
    pool,
    fresh() {
      counter += 1;
      const name = `mnemo_test_${process.pid}_${counter}_${Math.random().toString(36).slice(2, 8)}`;
      handedOut.push(name);
      return name;
    },
    async dropAll() {
      for (const schema of handedOut.splice(0)) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
    async close() {
      await pool.end();
    },
  };
}

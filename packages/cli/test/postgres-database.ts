// PostgreSQL for the CLI's tests, as packages/postgres's tests get it: MNEMO_TEST_DATABASE_URL names a
// database the tests may create and drop schemas in. Without it the suites are skipped with the reason
// in their title, unless MNEMO_REQUIRE_POSTGRES=1 (as in CI) turns the missing database into a failure.
import pg from 'pg';
import { describe, it } from 'vitest';

/** The URL of the test database, or `undefined` when none is configured. */
export const testDatabaseUrl = process.env['MNEMO_TEST_DATABASE_URL']?.trim() || undefined;

const required = process.env['MNEMO_REQUIRE_POSTGRES'] === '1';

/** Declares a suite that needs PostgreSQL: run with the URL, skipped (with a note) without one, failing when one is required. */
export function describeWithPostgres(name: string, body: (url: string) => void): void {
  if (testDatabaseUrl !== undefined) {
    describe(name, () => body(testDatabaseUrl));
    return;
  }
  if (required) {
    describe(name, () => {
      it('has a PostgreSQL database to test against', () => {
        throw new Error(
          'MNEMO_REQUIRE_POSTGRES=1 but MNEMO_TEST_DATABASE_URL is not set (see packages/postgres/README.md)',
        );
      });
    });
    return;
  }
  describe.skip(`${name} (skipped: MNEMO_TEST_DATABASE_URL is not set)`, () => body('postgres://unset'));
}

/** A fresh schema name on the test database and the `--db` URL that selects it (`?schema=`); nothing exists until a store uses it. */
export function freshSchemaUrl(url: string): { schema: string; url: string } {
  const schema = `mnemo_cli_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const withSchema = new URL(url);
  withSchema.searchParams.set('schema', schema);
  return { schema, url: withSchema.toString() };
}

/** Drops schemas made by {@link freshSchemaUrl}, with everything in them. */
export async function dropSchemas(url: string, schemas: readonly string[]): Promise<void> {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

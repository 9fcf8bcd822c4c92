import { existsSync } from 'node:fs';
import {
  createPostgresStore,
  findVectorExtension,
  migratePostgresSchema,
  type PostgresMigrationResult,
} from '@mnemo/postgres';
import { createSqliteStore, readSqliteSchemaVersion, sqliteMigrations } from '@mnemo/sqlite';
import Database from 'better-sqlite3';
import type { Command } from 'commander';
import pg from 'pg';
import type { CliIo } from '../cli-io.js';
import { isPostgresUrl, loadCliConfig } from '../config/cli-config.js';
import { describeDatabase, parsePostgresDatabase } from '../store/open-cli-store.js';
import { databaseOf, dbOptionDescription } from './add-store-options.js';

interface MigrateFlags {
  readonly db?: string;
  readonly json?: boolean;
  readonly config?: string;
}

/** What `mnemo migrate --json` prints. */
export interface MigrateReport extends PostgresMigrationResult {
  readonly store: 'sqlite' | 'postgres';
  /** The database, with any password masked. */
  readonly db: string;
  /** PostgreSQL: the schema migrated. */
  readonly schema?: string;
  /** PostgreSQL: the pgvector version installed in the database, or `null` without it (vectors then stay `real[]`, searched without an index). */
  readonly pgvector?: string | null;
}

/** Adds `mnemo migrate`: brings a store's schema to this version of mnemo (creating the store when missing) and prints the version. */
export function registerMigrateCommand(program: Command, io: CliIo): void {
  program
    .command('migrate')
    .description(
      "create the store or bring its schema up to this mnemo's version (SQLite file or PostgreSQL schema), and print the schema version",
    )
    .option('--db <path|url>', dbOptionDescription)
    .option('--json', 'print one JSON object: store, db, schema, fromVersion, toVersion, applied, pgvector')
    .action(async (_flags: MigrateFlags, command: Command) => {
      await runMigrate(command.optsWithGlobals<MigrateFlags>(), io);
    });
}

async function runMigrate(flags: MigrateFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const db = databaseOf(flags, config, io);
  const report = isPostgresUrl(db) ? await migratePostgres(db) : await migrateSqlite(db);
  if (flags.json === true) {
    io.stdout.write(`${JSON.stringify(report)}\n`);
    return;
  }
  const where = report.schema === undefined ? report.db : `${report.db} (schema ${report.schema})`;
  const change =
    report.applied.length === 0
      ? 'up to date'
      : `migrated from version ${report.fromVersion}, applied ${report.applied.join(', ')}`;
  const vectors =
    report.pgvector === undefined
      ? ''
      : report.pgvector === null
        ? '; no pgvector: vectors are searched without an index'
        : `; pgvector ${report.pgvector}`;
  io.stdout.write(`${where}: schema version ${report.toVersion}, ${change}${vectors}\n`);
}

// SQLite records its version in PRAGMA user_version; opening the store migrates it in one transaction.
async function migrateSqlite(db: string): Promise<MigrateReport> {
  let fromVersion = 0;
  if (db !== ':memory:' && existsSync(db)) {
    const database = new Database(db, { readonly: true, fileMustExist: true });
    try {
      fromVersion = readSqliteSchemaVersion(database);
    } finally {
      database.close();
    }
  }
  // Closing the store right away: opening it was the migration (a newer schema is refused by it, untouched).
  await createSqliteStore({ path: db }).close();
  const toVersion = sqliteMigrations.length;
  const applied = sqliteMigrations
    .filter((migration) => migration.version > fromVersion)
    .map((migration) => migration.version);
  return { store: 'sqlite', db, fromVersion, toVersion, applied };
}

async function migratePostgres(db: string): Promise<MigrateReport> {
  const { connectionString, schema } = parsePostgresDatabase(db);
  const pool = new pg.Pool({ connectionString, max: 1, application_name: 'mnemo' });
  pool.on('error', () => undefined);
  try {
    const result = await migratePostgresSchema(pool, schema === undefined ? {} : { schema });
    // Opening the store after the migration moves real[] vectors into pgvector tables when the extension arrived since.
    await (
      await createPostgresStore({ connectionString, ...(schema === undefined ? {} : { schema }), poolMax: 1 })
    ).close();
    const extensionSchema = await findVectorExtension(pool);
    const version =
      extensionSchema === undefined
        ? null
        : ((await pool.query<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'"))
            .rows[0]?.v ?? null);
    return { store: 'postgres', db: describeDatabase(db), schema: schema ?? 'mnemo', ...result, pgvector: version };
  } finally {
    await pool.end();
  }
}

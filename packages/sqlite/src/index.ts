export type { SqliteDatabase, SqliteRunResult, SqliteStatement, SqliteTransaction } from './sqlite-driver.js';
export { migrateSqliteSchema, readSqliteSchemaVersion, sqliteMigrations } from './sqlite-migrations.js';
export type { SqliteMigrateOptions, SqliteMigration, SqliteMigrationResult } from './sqlite-migrations.js';
export { createSqliteStore, defaultBusyTimeoutMs, openSqliteStore, SqliteStore } from './sqlite-store.js';
export type { SqliteStoreOptions } from './sqlite-store.js';

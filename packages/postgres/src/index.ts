export type { PostgresClient, PostgresPool, PostgresQueryable, PostgresQueryResult } from './postgres-driver.js';
export { isUniqueViolation, postgresErrorCode, toPostgresError } from './postgres-error.js';
export { migratePostgresSchema, postgresMigrations, readPostgresSchemaVersion } from './postgres-migrations.js';
export type { PostgresMigrateOptions, PostgresMigration, PostgresMigrationResult } from './postgres-migrations.js';
export { createPostgresStore, PostgresStore, postgresStoreDefaults } from './postgres-store.js';
export type { PostgresStoreOptions } from './postgres-store.js';
export { checkSchemaName, defaultPostgresSchema, postgresTables } from './postgres-tables.js';
export type { PostgresTables } from './postgres-tables.js';

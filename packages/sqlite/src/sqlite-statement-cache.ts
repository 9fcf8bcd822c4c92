import type { SqliteDatabase, SqliteStatement } from './sqlite-driver.js';

/** Prepares each SQL text once per connection and hands back the cached statement afterwards. */
export type SqliteStatementCache = (query: string) => SqliteStatement;

/** Creates a {@link SqliteStatementCache} on one connection. */
export function createStatementCache(database: SqliteDatabase): SqliteStatementCache {
  const statements = new Map<string, SqliteStatement>();
  return (query) => {
    let statement = statements.get(query);
    if (statement === undefined) {
      statement = database.prepare(query);
      statements.set(query, statement);
    }
    return statement;
  };
}

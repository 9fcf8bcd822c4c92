/**
 * The subset of `pg` (node-postgres) that the PostgreSQL store uses, described structurally so that tests
 * can pass a fake and nothing outside `createPostgresStore` depends on the driver package itself.
 */

/** What a query returns: the rows as plain objects, and how many rows the statement touched. */
export interface PostgresQueryResult<Row = Record<string, unknown>> {
  readonly rows: Row[];
  /** Rows inserted, updated, deleted or selected; `null` for statements that report none. */
  readonly rowCount: number | null;
}

/** Something that runs one statement with `$1…$n` parameters: a pooled client, or the pool itself. */
export interface PostgresQueryable {
  /** Runs `text` with `values`; rejects with the driver's error (with a SQLSTATE `code` such as `40001`). */
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<PostgresQueryResult<Row>>;
}

/** A connection checked out of the pool: transactions run on one of these. */
export interface PostgresClient extends PostgresQueryable {
  /** Returns the connection to the pool; with an error (or `true`) the pool discards it instead. */
  release(destroy?: Error | boolean): void;
  /**
   * A checked-out connection reports a lost socket or a server-side termination (a restart: SQLSTATE
   * 57P01) between statements as an `error` event; the pool stops listening while it is checked out, and
   * Node ends the process on an `error` event nobody listens to.
   */
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** A pool of connections: `pg.Pool` satisfies this type. */
export interface PostgresPool extends PostgresQueryable {
  /** Checks out a connection, waiting for a free one (up to the pool's connection timeout). */
  connect(): Promise<PostgresClient>;
  /** Closes every connection; the pool cannot be used afterwards. */
  end(): Promise<void>;
  /** The pool reports errors of idle connections (a server restart, a dropped socket) as `error` events. */
  on(event: 'error', listener: (error: Error) => void): unknown;
}

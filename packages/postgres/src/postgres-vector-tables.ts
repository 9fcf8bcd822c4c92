import type { PostgresClient, PostgresPool, PostgresQueryable } from './postgres-driver.js';
import { postgresMigrationLockKey } from './postgres-migrations.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';

/** Most dimensions pgvector's HNSW index takes for `vector`; longer vectors are stored and searched exactly, without an index. */
export const hnswMaxDimensions = 2000;

/** Memory an index build may sort in, set for the transactions that build one (PostgreSQL's default is 64 MB). */
export const indexBuildMemory = '256MB';

/** One pgvector table: the vectors of one model with one length, for every tenant. */
export interface VectorTable {
  readonly id: number;
  readonly model: string;
  readonly dimensions: number;
  /** Qualified name, `"schema".vectors_<id>`. */
  readonly name: string;
  /** Its HNSW index (cosine); absent past {@link hnswMaxDimensions}. */
  readonly indexName?: string;
}

/** The schema the `vector` extension is installed in, or `undefined` when this database has no pgvector. */
export async function findVectorExtension(queryable: PostgresQueryable): Promise<string | undefined> {
  const result = await queryable.query<{ schema: string }>(
    "SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'",
  );
  return result.rows[0]?.schema;
}

/** SQL names of pgvector's objects in the schema it is installed in. */
export interface PgvectorNames {
  /** The `vector` type, e.g. `"public".vector`. */
  readonly type: string;
  /** The cosine distance operator, `OPERATOR("public".<=>)`. */
  readonly cosineDistance: string;
  readonly cosineOps: string;
}

/** pgvector's type, operator and operator class qualified with its schema, so no `search_path` is needed. */
export function pgvectorNames(extensionSchema: string): PgvectorNames {
  const schema = `"${extensionSchema.replaceAll('"', '""')}"`;
  return {
    type: `${schema}.vector`,
    cosineDistance: `OPERATOR(${schema}.<=>)`,
    cosineOps: `${schema}.vector_cosine_ops`,
  };
}

/**
 * The registry of pgvector tables (`vector_tables`): one table per (model, dimensions), created on first
 * use, each with the message key, the message's time (for time filters before the LIMIT) and a
 * `vector(n)` column under an HNSW index with `vector_cosine_ops`. Rows go with their message
 * (`ON DELETE CASCADE`). Tables are created under the migration lock, so replicas that embed a new model
 * at once create it once. Lookups are cached: a table, once registered, never changes.
 */
export class PostgresVectorTables {
  readonly #pool: PostgresPool;
  readonly #tables: PostgresTables;
  readonly #names: PgvectorNames;
  readonly #cache = new Map<string, VectorTable>();

  constructor(pool: PostgresPool, tables: PostgresTables, extensionSchema: string) {
    this.#pool = pool;
    this.#tables = tables;
    this.#names = pgvectorNames(extensionSchema);
  }

  /** pgvector's names, for the statements of the search. */
  get names(): PgvectorNames {
    return this.#names;
  }

  /** The table of `model` with `dimensions`, or `undefined` when none was created yet. */
  async find(model: string, dimensions: number): Promise<VectorTable | undefined> {
    const cached = this.#cache.get(cacheKey(model, dimensions));
    if (cached !== undefined) return cached;
    const found = await selectVectorTable(this.#pool, this.#tables, model, dimensions);
    if (found !== undefined) this.#cache.set(cacheKey(model, dimensions), found);
    return found;
  }

  /** The table of `model` with `dimensions`, created (with its index) when missing. */
  async ensure(model: string, dimensions: number): Promise<VectorTable> {
    const found = await this.find(model, dimensions);
    if (found !== undefined) return found;
    const created = await runInTransaction(this.#pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', postgresMigrationLockKey);
      return createVectorTable(client, this.#tables, this.#names, model, dimensions, true);
    });
    this.#cache.set(cacheKey(model, dimensions), created);
    return created;
  }

  /** Every registered table, oldest first. */
  async list(): Promise<VectorTable[]> {
    const rows = (
      await this.#pool.query<RegistryRow>(`SELECT id, model, dimensions FROM ${this.#tables.vectorTables} ORDER BY id`)
    ).rows;
    return rows.map((row) => toVectorTable(this.#tables, row));
  }
}

interface RegistryRow {
  readonly id: unknown;
  readonly model: string;
  readonly dimensions: unknown;
}

function cacheKey(model: string, dimensions: number): string {
  return `${dimensions}\u0000${model}`;
}

function toVectorTable(tables: PostgresTables, row: RegistryRow): VectorTable {
  const id = Number(row.id);
  const dimensions = Number(row.dimensions);
  return Object.freeze({
    id,
    model: row.model,
    dimensions,
    name: tables.vectorTable(id),
    ...(dimensions <= hnswMaxDimensions ? { indexName: `vectors_${id}_embedding` } : {}),
  });
}

async function selectVectorTable(
  queryable: PostgresQueryable,
  tables: PostgresTables,
  model: string,
  dimensions: number,
): Promise<VectorTable | undefined> {
  const result = await queryable.query<RegistryRow>(
    `SELECT id, model, dimensions FROM ${tables.vectorTables} WHERE model = $1 AND dimensions = $2`,
    [model, dimensions],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : toVectorTable(tables, row);
}

// Runs in the caller's transaction, which holds the migration lock: a concurrent creator waits for it and
// then finds the registry row. `withIndex: false` leaves the HNSW index to the caller (a bulk load builds
// it once after the rows are in, which is much faster than inserting into a live graph).
async function createVectorTable(
  client: PostgresClient,
  tables: PostgresTables,
  names: PgvectorNames,
  model: string,
  dimensions: number,
  withIndex: boolean,
): Promise<VectorTable> {
  const existing = await selectVectorTable(client, tables, model, dimensions);
  if (existing !== undefined) return existing;
  const inserted = await client.query<RegistryRow>(
    `INSERT INTO ${tables.vectorTables} (model, dimensions) VALUES ($1, $2) RETURNING id, model, dimensions`,
    [model, dimensions],
  );
  const table = toVectorTable(tables, inserted.rows[0]!);
  await client.query(`CREATE TABLE ${table.name} (
    tenant_id       text COLLATE "C" NOT NULL,
    user_id         text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL,
    seq             bigint NOT NULL,
    created_at      timestamptz NOT NULL,
    embedding       ${names.type}(${Math.trunc(dimensions)}) NOT NULL,
    PRIMARY KEY (tenant_id, user_id, conversation_id, seq),
    FOREIGN KEY (tenant_id, user_id, conversation_id, seq) REFERENCES ${tables.messages} (tenant_id, user_id, conversation_id, seq) ON DELETE CASCADE
  )`);
  if (withIndex) await createVectorIndex(client, table, names);
  return table;
}

async function createVectorIndex(client: PostgresClient, table: VectorTable, names: PgvectorNames): Promise<void> {
  if (table.indexName === undefined) return;
  await client.query(`SET LOCAL maintenance_work_mem = '${indexBuildMemory}'`);
  await client.query(`CREATE INDEX ${table.indexName} ON ${table.name} USING hnsw (embedding ${names.cosineOps})`);
}

/**
 * Moves vectors stored as `real[]` (by a store on a server that had no pgvector yet) into the pgvector
 * tables, in one transaction under the migration lock, building each new table's index after its rows are
 * in; returns how many vectors moved (0, and no lock taken, when there are none).
 */
export async function adoptArrayVectors(
  pool: PostgresPool,
  tables: PostgresTables,
  extensionSchema: string,
): Promise<number> {
  const pending = await pool.query(`SELECT 1 FROM ${tables.messageVectors} LIMIT 1`);
  if (pending.rowCount === 0) return 0;
  const names = pgvectorNames(extensionSchema);
  return runInTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', postgresMigrationLockKey);
    const groups = await client.query<{ model: string; dimensions: unknown }>(
      `SELECT DISTINCT model, cardinality(vector) AS dimensions FROM ${tables.messageVectors}`,
    );
    let moved = 0;
    for (const group of groups.rows) {
      const dimensions = Number(group.dimensions);
      const existing = await selectVectorTable(client, tables, group.model, dimensions);
      const table = existing ?? (await createVectorTable(client, tables, names, group.model, dimensions, false));
      const inserted = await client.query(
        `INSERT INTO ${table.name} (tenant_id, user_id, conversation_id, seq, created_at, embedding)
         SELECT v.tenant_id, v.user_id, v.conversation_id, v.seq, m.created_at, v.vector::${names.type}
         FROM ${tables.messageVectors} v JOIN ${tables.messages} m USING (tenant_id, user_id, conversation_id, seq)
         WHERE v.model = $1 AND cardinality(v.vector) = $2
         ON CONFLICT (tenant_id, user_id, conversation_id, seq) DO UPDATE SET embedding = excluded.embedding`,
        [group.model, dimensions],
      );
      moved += inserted.rowCount ?? 0;
      if (existing === undefined) await createVectorIndex(client, table, names);
    }
    await client.query(`DELETE FROM ${tables.messageVectors}`);
    return moved;
  });
}

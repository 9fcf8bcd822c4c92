import { MemoryError } from '@mnemo/core';

/** Schema-qualified, quoted names of the store's tables, for splicing into SQL text. */
export interface PostgresTables {
  readonly schema: string;
  readonly migrations: string;
  readonly conversations: string;
  readonly messages: string;
  readonly usage: string;
  readonly summaries: string;
  readonly jobs: string;
  readonly memoryFiles: string;
  readonly embeddingModels: string;
  readonly messageVectors: string;
  readonly facts: string;
  readonly entities: string;
  readonly entityNames: string;
  readonly relations: string;
  readonly cursors: string;
  /** Per-user document frequencies of lexemes, kept by triggers on `messages` (keyword search's pruning). */
  readonly keywordTerms: string;
  /** Registry of the pgvector tables, one per (model, dimensions). */
  readonly vectorTables: string;
  /** The audit log of message erasures (selection and counts, no content). */
  readonly erasures: string;
  /** The pgvector table with registry id `id`: `"schema".vectors_<id>`. */
  vectorTable(id: number): string;
}

/** Default of the `schema` option: the store's tables live in their own schema, out of `public`. */
export const defaultPostgresSchema = 'mnemo';

// Lower-case identifiers only: they need no case folding rules, and quoting them is then a formality.
const schemaNamePattern = /^[a-z_][a-z0-9_]{0,62}$/;

/** Checks a schema name (lower-case letters, digits and `_`, not starting with a digit, 1–63 characters); `invalid_input` otherwise. */
export function checkSchemaName(schema: unknown): string {
  if (typeof schema === 'string' && schemaNamePattern.test(schema) && !schema.startsWith('pg_')) return schema;
  throw new MemoryError(
    'invalid_input',
    `schema must be 1–63 lower-case letters, digits or "_", not starting with a digit or "pg_" (got ${JSON.stringify(schema)})`,
    {
      details: { field: 'schema' },
    },
  );
}

/** The qualified table names of a store in `schema` (checked with {@link checkSchemaName}). */
export function postgresTables(schema: string): PostgresTables {
  const quoted = `"${checkSchemaName(schema)}"`;
  return Object.freeze({
    schema,
    migrations: `${quoted}.mnemo_migrations`,
    conversations: `${quoted}.conversations`,
    messages: `${quoted}.messages`,
    usage: `${quoted}.usage`,
    summaries: `${quoted}.summaries`,
    jobs: `${quoted}.jobs`,
    memoryFiles: `${quoted}.memory_files`,
    embeddingModels: `${quoted}.embedding_models`,
    messageVectors: `${quoted}.message_vectors`,
    facts: `${quoted}.facts`,
    entities: `${quoted}.entities`,
    entityNames: `${quoted}.entity_names`,
    relations: `${quoted}.relations`,
    cursors: `${quoted}.cursors`,
    keywordTerms: `${quoted}.keyword_terms`,
    vectorTables: `${quoted}.vector_tables`,
    erasures: `${quoted}.erasures`,
    vectorTable: (id: number) => `${quoted}.vectors_${Math.trunc(id)}`,
  });
}

import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { maxContextTokens, MemoryError, recallModes, type RecallMode } from '@mnemo/core';
import { builtInContextDefaults, defaultQueryEmbeddingTimeoutMs } from '@mnemo/core/internals';
import { OpenAiEmbedder } from '@mnemo/models';
import { defaultUpstreamTimeouts } from '@mnemo/server/proxy';
import { z } from 'zod';
import { cliPolicies, type CliPolicy } from './cli-policies.js';

/** Settings every command starts from, merged from the config file, the environment and the defaults. */
export interface CliConfig {
  /** SQLite file (absolute), `:memory:`, or a `postgres://` URL (`?schema=` picks the schema). Default `./mnemo.db`. */
  readonly db: string;
  readonly llm: {
    readonly baseUrl?: string;
    readonly apiKey?: string;
    readonly model?: string;
    /** Limit of one model call, in milliseconds. Default 60,000. */
    readonly timeoutMs: number;
    /** The proxy passes the client's own provider key upstream when no `apiKey` is set (see the server's `UpstreamLlmConfig`). Default false. */
    readonly passClientKey: boolean;
    /** False: the proxy leaves `prompt_cache_key` out when the client sent none (see the server's `UpstreamLlmConfig`); unset: on. */
    readonly promptCacheKey?: boolean;
    /** The proxy's upstream timeouts, in ms (the server's `UpstreamLlmConfig`; defaults 10,000, 120,000 and 60,000). Past one the client gets 504. */
    readonly connectTimeoutMs: number;
    readonly firstByteTimeoutMs: number;
    readonly idleTimeoutMs: number;
    /** How the proxy's `POST /v1/responses` reaches the upstream: `forward`, `translate` (to chat completions), or `auto` (default: forward to api.openai.com, translate for any other). */
    readonly responsesApi: 'auto' | 'forward' | 'translate';
  };
  /** The Anthropic Messages upstream of the proxy's `POST /v1/messages` (its timeouts are `llm`'s); no base URL: the route answers 503. */
  readonly anthropic: {
    readonly baseUrl?: string;
    readonly apiKey?: string;
    /** Pass the client's own Anthropic key (`x-api-key`, or `X-Mnemo-Upstream-Authorization`) when no `apiKey` is set. Default false. */
    readonly passClientKey: boolean;
  };
  readonly context: {
    /** Unset means each command's own default (replay compares every policy); `meshai` is `summary` with the meshai compaction preset. */
    readonly policy?: CliPolicy;
    /** Budget of each request, in tokens. Default 2,000 (core's `builtInContextDefaults`). */
    readonly maxTokens: number;
    /** Turns the `window` policy keeps. Default 4. */
    readonly windowTurns: number;
    /** When the hybrid policy recalls: `when-asked` (default, a turn that asks something) or `every-turn`. */
    readonly recall: RecallMode;
    readonly system?: string;
  };
  /**
   * How messages are embedded for vector recall: `static` (default; offline, a token table distilled
   * from USE-lite that embeds in microseconds on the request thread, decision 0032), `use-lite` (offline,
   * the bundled Universal Sentence Encoder lite: better on some questions, ~20 ms a turn), `openai`
   * (any OpenAI-compatible `/embeddings`; `model` required, base URL and key default to `llm.*`), `hashed`
   * (core's bag-of-words `HashedEmbedder`: instant and deterministic, for tests and benchmarks, no
   * semantics), or `none` (keyword-only recall). `replay` embeds nothing unless asked.
   */
  readonly embedder: {
    readonly kind: 'static' | 'use-lite' | 'openai' | 'hashed' | 'none';
    readonly model?: string;
    /** Vector length of an `openai` model that is not one of OpenAI's own, or of the `hashed` embedder (default 256). */
    readonly dimensions?: number;
    readonly baseUrl?: string;
    readonly apiKey?: string;
    /** Deadline of a context's query embedding in `serve`, in ms; past it recall is keyword-only and the report says so. Default 30; 1,000 for `openai` (decision 0050). */
    readonly queryTimeoutMs: number;
    /**
     * A better model beside the `static` table (decision 0045): `use-lite` (the default beside `static`)
     * adds USE-lite vectors while the machine's cores are idle, and recall ranks with them where they are
     * there and the query can be embedded in time; `none` turns it off. Only beside `static`.
     */
    readonly refiner: 'use-lite' | 'none';
    /** The refiner works while the rest of the machine keeps less than this share of its cores busy (0–1; default 0.25; 0 never, 1 always). */
    readonly refinerIdleShare: number;
  };
  /** Settings of `mnemo serve`; absent when neither the file nor `MNEMO_API_KEYS` sets any. */
  readonly server?: CliServerConfig;
  /** How long messages are kept (the workers erase older ones); absent when neither the file nor `MNEMO_RETENTION_DAYS` sets it. */
  readonly retention?: CliRetentionConfig;
  /** Absolute path of the config file that was read, if any. */
  readonly configFile?: string;
}

/** Settings of `mnemo serve` (flags override `host` and `port`). */
export interface CliServerConfig {
  readonly host?: string;
  readonly port?: number;
  /** API keys and their tenants: `MNEMO_API_KEYS` replaces the file's list. Empty: no keys, loopback only. */
  readonly apiKeys: readonly { readonly key: string; readonly tenantId: string }[];
  readonly maxBodyBytes?: number;
  readonly maxImportBytes?: number;
  /** `false` turns the per-key rate limit off; unset: 50 requests/s per key with API keys, none without. */
  readonly rateLimit?: false | { readonly requestsPerSecond: number; readonly burst: number };
  /** Requests handled at once before one more gets 503 + `Retry-After` (default 512). */
  readonly maxConcurrentRequests?: number;
  /** Worker processes `serve` starts (`--workers` wins); default one per core beyond the first, 1 to 4. */
  readonly workers?: number;
  /** HTTP processes `serve` runs on its one port (`--http-processes` wins, then `MNEMO_HTTP_PROCESSES`); default 1 on up to 2 cores, else one per core left after the workers, at most 8. */
  readonly httpProcesses?: number;
  /** How long a worker process of `serve` may go without a heartbeat (1 a second) before it is killed and started again; default 15,000 ms. */
  readonly workerHeartbeatTimeoutMs?: number;
  /** Browser origins allowed by CORS; empty (the default) sends no CORS headers. */
  readonly corsOrigins: readonly string[];
  /** Host names answered besides loopback ones (`MNEMO_ALLOWED_HOSTS` replaces the file's list); requests naming any other Host are refused. */
  readonly allowedHosts: readonly string[];
}

/**
 * Retention: messages older than `maxAgeDays` are erased with everything made of them, by the worker
 * processes every `intervalMinutes` (default 60) and by `mnemo retention`. `tenants` overrides the days per
 * tenant and per user of a tenant; `null` keeps forever.
 */
export interface CliRetentionConfig {
  readonly maxAgeDays?: number;
  readonly intervalMinutes: number;
  readonly tenants: Readonly<
    Record<string, { readonly maxAgeDays?: number | null; readonly users?: Readonly<Record<string, number | null>> }>
  >;
}

/** The defaults the CLI applies when neither the environment nor a config file says otherwise. */
// The budget and window are the library's own defaults, so the library, `mnemo serve`, the proxy, MCP and replay agree.
export const cliDefaults = Object.freeze({
  db: './mnemo.db',
  maxTokens: builtInContextDefaults.maxTokens,
  windowTurns: builtInContextDefaults.windowTurns,
  recall: builtInContextDefaults.recall,
  timeoutMs: 60_000,
});

/** Name of the config file looked up in the working directory when `--config` is not given. */
export const defaultConfigFileName = 'mnemo.config.json';

/** The environment variables the CLI reads, each with what it sets. */
export const cliEnvironmentVariables = Object.freeze({
  MNEMO_DATABASE_URL: 'PostgreSQL store, postgres://user:password@host/database[?schema=name]; wins over MNEMO_DB',
  MNEMO_DB: 'SQLite file (or postgres:// URL) of every command that opens a store (default ./mnemo.db)',
  MNEMO_LLM_BASE_URL: 'OpenAI-compatible base URL, e.g. http://localhost:11434/v1',
  MNEMO_LLM_API_KEY: 'API key of that endpoint, if it needs one',
  MNEMO_LLM_MODEL: 'model id to chat with, e.g. llama3.2',
  MNEMO_LLM_PASS_CLIENT_KEY:
    "1: the proxy passes the client's own provider key upstream when MNEMO_LLM_API_KEY is unset (default 0: none is sent)",
  MNEMO_LLM_PROMPT_CACHE_KEY:
    '0: the proxy sets no prompt_cache_key when the client sent none (default 1: one per end user and conversation)',
  MNEMO_LLM_CONNECT_TIMEOUT_MS: `ms the proxy waits to connect to the upstream before answering 504 (default ${defaultUpstreamTimeouts.connectTimeoutMs})`,
  MNEMO_LLM_FIRST_BYTE_TIMEOUT_MS: `ms the proxy waits for the upstream's response headers before answering 504 (default ${defaultUpstreamTimeouts.firstByteTimeoutMs})`,
  MNEMO_LLM_IDLE_TIMEOUT_MS: `longest silence in ms between two pieces of the upstream's answer before the proxy gives up (default ${defaultUpstreamTimeouts.idleTimeoutMs})`,
  MNEMO_LLM_RESPONSES_API:
    'how the proxy serves POST /v1/responses: forward (the upstream speaks Responses), translate (to chat completions), auto (default: forward to api.openai.com, else translate)',
  MNEMO_ANTHROPIC_BASE_URL:
    "Anthropic Messages upstream of the proxy's POST /v1/messages, e.g. https://api.anthropic.com",
  MNEMO_ANTHROPIC_API_KEY: 'its API key, sent as x-api-key',
  MNEMO_ANTHROPIC_PASS_CLIENT_KEY:
    "1: the proxy passes the client's own Anthropic key upstream when MNEMO_ANTHROPIC_API_KEY is unset (default 0: none is sent)",
  MNEMO_ALLOWED_HOSTS: 'host names mnemo serve answers to besides loopback ones, comma-separated (e.g. mnemo.internal)',
  MNEMO_MAX_TOKENS: `token budget of each request (default ${cliDefaults.maxTokens})`,
  MNEMO_POLICY: `context policy: ${cliPolicies.join(', ')}`,
  MNEMO_RECALL:
    'when the hybrid policy recalls snippets: when-asked (default: a turn that asks, such as a question), every-turn',
  MNEMO_API_KEYS: 'API keys of mnemo serve and their tenants: key1:tenantA,key2:tenantB',
  MNEMO_EMBEDDER:
    'embedder for vector recall: static (default, offline, microseconds), use-lite (offline, ~20 ms a turn), openai, hashed (tests, benchmarks), none',
  MNEMO_REFINER:
    'beside the static embedder: use-lite (default: USE-lite vectors added while cores are idle, used by recall where present), none',
  MNEMO_REFINER_IDLE_SHARE:
    'the refiner works while the rest of the machine keeps less than this share of its cores busy (0 to 1, default 0.25; 0 never, 1 always)',
  MNEMO_EMBEDDING_MODEL: 'embedding model of an openai embedder, e.g. nomic-embed-text',
  MNEMO_EMBEDDING_DIMENSIONS: "vector length of that model, unless it is one of OpenAI's",
  MNEMO_EMBEDDING_BASE_URL: 'its base URL (default MNEMO_LLM_BASE_URL)',
  MNEMO_EMBEDDING_API_KEY: 'its API key (default MNEMO_LLM_API_KEY)',
  MNEMO_QUERY_EMBEDDING_TIMEOUT_MS:
    'deadline of a context query embedding in serve, past which recall is keyword-only (default 30)',
  MNEMO_HTTP_PROCESSES:
    'HTTP processes of mnemo serve on its one port (default 1 on up to 2 cores, else one per core left after the workers)',
  MNEMO_RETENTION_DAYS:
    'erase messages older than this many days, with everything made of them (the workers, hourly; default: keep forever)',
});

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const maxTokens = z.number().int().min(1).max(maxContextTokens);
const policy = z.enum(cliPolicies);
const apiKey = z.strictObject({ key: z.string().min(1), tenantId: z.string().min(1) });
// `key1:tenantA,key2:tenantB`; a key may hold colons, so the tenant is what follows the last one.
const apiKeyList = z.string().transform((text, context) =>
  text.split(',').flatMap((item, index) => {
    const entry = item.trim();
    const colon = entry.lastIndexOf(':');
    if (colon > 0 && colon < entry.length - 1)
      return [{ key: entry.slice(0, colon), tenantId: entry.slice(colon + 1) }];
    context.addIssue({ code: 'custom', message: `item ${index + 1} is not key:tenant` });
    return [];
  }),
);

const responsesApi = z.enum(['auto', 'forward', 'translate']);
const embedderKind = z.enum(['static', 'use-lite', 'openai', 'hashed', 'none']);

const refinerKind = z.enum(['use-lite', 'none']);

/** The share of the machine's cores the rest of it may keep busy while the refiner works (decision 0045). */
export const defaultRefinerIdleShare = 0.25;

/** The embedder kinds of the config (and of `--embedder`). */
export const embedderKinds = embedderKind.options;
const postgresUrl = z.string().regex(/^postgres(ql)?:\/\//, { error: 'must be a postgres:// or postgresql:// URL' });

const fileSchema = z.strictObject({
  $schema: z.string().optional(),
  db: z.string().min(1).optional(),
  embedder: z
    .strictObject({
      kind: embedderKind.optional(),
      model: z.string().min(1).optional(),
      dimensions: z.number().int().min(1).optional(),
      baseUrl: httpUrl.optional(),
      apiKey: z.string().optional(),
      queryTimeoutMs: z.number().int().min(1).optional(),
      refiner: refinerKind.optional(),
      refinerIdleShare: z.number().min(0).max(1).optional(),
    })
    .optional(),
  llm: z
    .strictObject({
      baseUrl: httpUrl.optional(),
      apiKey: z.string().optional(),
      model: z.string().min(1).optional(),
      timeoutMs: z.number().int().min(1).optional(),
      passClientKey: z.boolean().optional(),
      promptCacheKey: z.boolean().optional(),
      connectTimeoutMs: z.number().int().min(1).optional(),
      firstByteTimeoutMs: z.number().int().min(1).optional(),
      idleTimeoutMs: z.number().int().min(1).optional(),
      responsesApi: responsesApi.optional(),
    })
    .optional(),
  anthropic: z
    .strictObject({
      baseUrl: httpUrl.optional(),
      apiKey: z.string().optional(),
      passClientKey: z.boolean().optional(),
    })
    .optional(),
  context: z
    .strictObject({
      policy: policy.optional(),
      maxTokens: maxTokens.optional(),
      windowTurns: z.number().int().min(1).max(100_000).optional(),
      recall: z.enum(recallModes).optional(),
      system: z.string().optional(),
    })
    .optional(),
  server: z
    .strictObject({
      host: z.string().min(1).optional(),
      port: z.number().int().min(0).max(65_535).optional(),
      apiKeys: z.array(apiKey).optional(),
      maxBodyBytes: z.number().int().min(1).optional(),
      maxImportBytes: z.number().int().min(1).optional(),
      rateLimit: z
        .union([
          z.literal(false),
          z.strictObject({ requestsPerSecond: z.number().positive(), burst: z.number().int().min(1) }),
        ])
        .optional(),
      maxConcurrentRequests: z.number().int().min(1).optional(),
      workers: z.number().int().min(0).max(64).optional(),
      httpProcesses: z.number().int().min(1).max(64).optional(),
      workerHeartbeatTimeoutMs: z.number().int().min(2_000).optional(),
      corsOrigins: z.array(z.string().min(1)).optional(),
      allowedHosts: z.array(z.string().min(1)).optional(),
    })
    .optional(),
  retention: z
    .strictObject({
      maxAgeDays: z.number().positive().optional(),
      intervalMinutes: z.number().positive().optional(),
      tenants: z
        .record(
          z.string().min(1),
          z.strictObject({
            maxAgeDays: z.number().positive().nullable().optional(),
            users: z.record(z.string().min(1), z.number().positive().nullable()).optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});

const wholeMilliseconds = z.coerce.number<string>({ error: 'must be a whole number' }).pipe(z.number().int().min(1));

const envSchema = z.object({
  MNEMO_DATABASE_URL: postgresUrl.optional(),
  MNEMO_DB: z.string().min(1).optional(),
  MNEMO_LLM_BASE_URL: httpUrl.optional(),
  MNEMO_LLM_API_KEY: z.string().optional(),
  MNEMO_LLM_MODEL: z.string().min(1).optional(),
  MNEMO_LLM_PASS_CLIENT_KEY: z.enum(['0', '1', 'true', 'false']).optional(),
  MNEMO_LLM_PROMPT_CACHE_KEY: z.enum(['0', '1', 'true', 'false']).optional(),
  MNEMO_LLM_CONNECT_TIMEOUT_MS: wholeMilliseconds.optional(),
  MNEMO_LLM_FIRST_BYTE_TIMEOUT_MS: wholeMilliseconds.optional(),
  MNEMO_LLM_IDLE_TIMEOUT_MS: wholeMilliseconds.optional(),
  MNEMO_LLM_RESPONSES_API: responsesApi.optional(),
  MNEMO_ANTHROPIC_BASE_URL: httpUrl.optional(),
  MNEMO_ANTHROPIC_API_KEY: z.string().optional(),
  MNEMO_ANTHROPIC_PASS_CLIENT_KEY: z.enum(['0', '1', 'true', 'false']).optional(),
  MNEMO_ALLOWED_HOSTS: z.string().min(1).optional(),
  MNEMO_MAX_TOKENS: z.coerce.number<string>({ error: 'must be a whole number' }).pipe(maxTokens).optional(),
  MNEMO_POLICY: policy.optional(),
  MNEMO_RECALL: z.enum(recallModes).optional(),
  MNEMO_API_KEYS: apiKeyList.optional(),
  MNEMO_EMBEDDER: embedderKind.optional(),
  MNEMO_REFINER: refinerKind.optional(),
  MNEMO_REFINER_IDLE_SHARE: z.coerce
    .number<string>({ error: 'must be a number from 0 to 1' })
    .pipe(z.number().min(0).max(1))
    .optional(),
  MNEMO_EMBEDDING_MODEL: z.string().min(1).optional(),
  MNEMO_EMBEDDING_DIMENSIONS: z.coerce
    .number<string>({ error: 'must be a whole number' })
    .pipe(z.number().int().min(1))
    .optional(),
  MNEMO_EMBEDDING_BASE_URL: httpUrl.optional(),
  MNEMO_EMBEDDING_API_KEY: z.string().optional(),
  MNEMO_QUERY_EMBEDDING_TIMEOUT_MS: wholeMilliseconds.optional(),
  MNEMO_HTTP_PROCESSES: z.coerce
    .number<string>({ error: 'must be a whole number' })
    .pipe(z.number().int().min(1).max(64))
    .optional(),
  MNEMO_RETENTION_DAYS: z.coerce
    .number<string>({ error: 'must be a number of days' })
    .pipe(z.number().positive())
    .optional(),
});

type FileConfig = z.infer<typeof fileSchema>;
type EnvConfig = z.infer<typeof envSchema>;

/** Where {@link loadCliConfig} looks. */
export interface LoadCliConfigOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** `--config`: this file must exist. Without it, `./mnemo.config.json` is read when present. */
  readonly configPath?: string;
}

/**
 * Loads the CLI settings: environment variables over the config file over {@link cliDefaults} (command
 * flags go over all three, in the commands). Relative paths in the file are relative to the file;
 * in the environment, to the working directory. Throws `invalid_input` naming the file or the variable
 * and the field for a value that does not validate; an unreadable `--config` file throws the fs error.
 */
export async function loadCliConfig(options: LoadCliConfigOptions): Promise<CliConfig> {
  const file = await readConfigFile(options);
  const env = parseEnvironment(options.env);
  const fileValues: FileConfig = file?.values ?? {};
  const fileDirectory = file === undefined ? options.cwd : dirname(file.path);
  const db =
    env.MNEMO_DATABASE_URL ??
    (env.MNEMO_DB !== undefined
      ? resolveDatabase(options.cwd, env.MNEMO_DB)
      : resolveDatabase(fileDirectory, fileValues.db ?? cliDefaults.db));
  const llm = {
    ...defined('baseUrl', env.MNEMO_LLM_BASE_URL ?? fileValues.llm?.baseUrl),
    ...defined('apiKey', env.MNEMO_LLM_API_KEY ?? fileValues.llm?.apiKey),
    ...defined('model', env.MNEMO_LLM_MODEL ?? fileValues.llm?.model),
    timeoutMs: fileValues.llm?.timeoutMs ?? cliDefaults.timeoutMs,
    passClientKey:
      env.MNEMO_LLM_PASS_CLIENT_KEY === undefined
        ? (fileValues.llm?.passClientKey ?? false)
        : ['1', 'true'].includes(env.MNEMO_LLM_PASS_CLIENT_KEY),
    ...defined(
      'promptCacheKey',
      env.MNEMO_LLM_PROMPT_CACHE_KEY === undefined
        ? fileValues.llm?.promptCacheKey
        : ['1', 'true'].includes(env.MNEMO_LLM_PROMPT_CACHE_KEY),
    ),
    connectTimeoutMs:
      env.MNEMO_LLM_CONNECT_TIMEOUT_MS ?? fileValues.llm?.connectTimeoutMs ?? defaultUpstreamTimeouts.connectTimeoutMs,
    firstByteTimeoutMs:
      env.MNEMO_LLM_FIRST_BYTE_TIMEOUT_MS ??
      fileValues.llm?.firstByteTimeoutMs ??
      defaultUpstreamTimeouts.firstByteTimeoutMs,
    idleTimeoutMs:
      env.MNEMO_LLM_IDLE_TIMEOUT_MS ?? fileValues.llm?.idleTimeoutMs ?? defaultUpstreamTimeouts.idleTimeoutMs,
    responsesApi: env.MNEMO_LLM_RESPONSES_API ?? fileValues.llm?.responsesApi ?? 'auto',
  };
  const anthropic = {
    ...defined('baseUrl', env.MNEMO_ANTHROPIC_BASE_URL ?? fileValues.anthropic?.baseUrl),
    ...defined('apiKey', env.MNEMO_ANTHROPIC_API_KEY ?? fileValues.anthropic?.apiKey),
    passClientKey:
      env.MNEMO_ANTHROPIC_PASS_CLIENT_KEY === undefined
        ? (fileValues.anthropic?.passClientKey ?? false)
        : ['1', 'true'].includes(env.MNEMO_ANTHROPIC_PASS_CLIENT_KEY),
  };
  const context = {
    ...defined('policy', env.MNEMO_POLICY ?? fileValues.context?.policy),
    maxTokens: env.MNEMO_MAX_TOKENS ?? fileValues.context?.maxTokens ?? cliDefaults.maxTokens,
    windowTurns: fileValues.context?.windowTurns ?? cliDefaults.windowTurns,
    recall: env.MNEMO_RECALL ?? fileValues.context?.recall ?? cliDefaults.recall,
    ...defined('system', fileValues.context?.system),
  };
  const embedderKindValue = env.MNEMO_EMBEDDER ?? fileValues.embedder?.kind ?? 'static';
  const refiner =
    env.MNEMO_REFINER ?? fileValues.embedder?.refiner ?? (embedderKindValue === 'static' ? 'use-lite' : 'none');
  if (refiner !== 'none' && embedderKindValue !== 'static')
    throw new MemoryError(
      'invalid_input',
      `a refiner runs only beside the static embedder (MNEMO_EMBEDDER is ${embedderKindValue})`,
      {
        details: { field: 'embedder.refiner' },
      },
    );
  const embedder = {
    kind: embedderKindValue,
    refiner,
    refinerIdleShare: env.MNEMO_REFINER_IDLE_SHARE ?? fileValues.embedder?.refinerIdleShare ?? defaultRefinerIdleShare,
    ...defined('model', env.MNEMO_EMBEDDING_MODEL ?? fileValues.embedder?.model),
    ...defined('dimensions', env.MNEMO_EMBEDDING_DIMENSIONS ?? fileValues.embedder?.dimensions),
    ...defined('baseUrl', env.MNEMO_EMBEDDING_BASE_URL ?? fileValues.embedder?.baseUrl ?? llm.baseUrl),
    ...defined('apiKey', env.MNEMO_EMBEDDING_API_KEY ?? fileValues.embedder?.apiKey ?? llm.apiKey),
    queryTimeoutMs:
      env.MNEMO_QUERY_EMBEDDING_TIMEOUT_MS ??
      fileValues.embedder?.queryTimeoutMs ??
      // An endpoint across the network gets the deadline it can make (decision 0050).
      (embedderKindValue === 'openai' ? OpenAiEmbedder.defaultQueryTimeoutMs : defaultQueryEmbeddingTimeoutMs),
  };
  const { apiKeys, corsOrigins, allowedHosts, ...server } = fileValues.server ?? {};
  const envHosts = env.MNEMO_ALLOWED_HOSTS?.split(',')
    .map((host) => host.trim())
    .filter((host) => host !== '');
  const serverConfig =
    fileValues.server === undefined &&
    env.MNEMO_API_KEYS === undefined &&
    envHosts === undefined &&
    env.MNEMO_HTTP_PROCESSES === undefined
      ? undefined
      : {
          ...server,
          ...defined('httpProcesses', env.MNEMO_HTTP_PROCESSES ?? server.httpProcesses),
          apiKeys: env.MNEMO_API_KEYS ?? apiKeys ?? [],
          corsOrigins: corsOrigins ?? [],
          allowedHosts: envHosts ?? allowedHosts ?? [],
        };
  const retentionFile = fileValues.retention;
  const retention =
    retentionFile === undefined && env.MNEMO_RETENTION_DAYS === undefined
      ? undefined
      : {
          ...defined('maxAgeDays', env.MNEMO_RETENTION_DAYS ?? retentionFile?.maxAgeDays),
          intervalMinutes: retentionFile?.intervalMinutes ?? 60,
          tenants: retentionFile?.tenants ?? {},
        };
  return Object.freeze({
    db,
    llm,
    anthropic,
    context,
    embedder,
    ...defined('server', serverConfig),
    ...defined('retention', retention),
    ...defined('configFile', file?.path),
  });
}

/** Resolves a path against a directory; `:memory:` stays as it is. */
export function resolvePath(directory: string, path: string): string {
  return path === ':memory:' || isAbsolute(path) ? path : resolve(directory, path);
}

/** True for a `postgres://` or `postgresql://` URL: a database that names a PostgreSQL store rather than a SQLite file. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/** Resolves a `--db` value: a PostgreSQL URL as it is, a SQLite path against the directory ({@link resolvePath}). */
export function resolveDatabase(directory: string, db: string): string {
  return isPostgresUrl(db) ? db : resolvePath(directory, db);
}

async function readConfigFile(
  options: LoadCliConfigOptions,
): Promise<{ path: string; values: FileConfig } | undefined> {
  const path = resolve(options.cwd, options.configPath ?? defaultConfigFileName);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (options.configPath === undefined && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new MemoryError('invalid_input', `config file ${path} is not valid JSON: ${(error as Error).message}`, {
      details: { file: path },
    });
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) throw invalidConfig(`config file ${path}:`, parsed.error, { file: path });
  return { path, values: parsed.data };
}

function parseEnvironment(env: Readonly<Record<string, string | undefined>>): EnvConfig {
  // An empty variable (`MNEMO_LLM_API_KEY=`) means unset, as in most shells' configs.
  const present = Object.fromEntries(
    Object.keys(cliEnvironmentVariables).flatMap((name) => {
      const value = env[name];
      return value === undefined || value.trim() === '' ? [] : [[name, value.trim()]];
    }),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) throw invalidConfig('environment variable', parsed.error, {});
  return parsed.data;
}

function invalidConfig(where: string, error: z.ZodError, details: Record<string, unknown>): MemoryError {
  const problems = error.issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    return field === '' ? issue.message : `${field}: ${issue.message}`;
  });
  const fields = error.issues.map((issue) => issue.path.map(String).join('.'));
  return new MemoryError('invalid_input', `${where} ${problems.join('; ')}`, { details: { ...details, fields } });
}

function defined<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

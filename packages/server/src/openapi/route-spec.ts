import { HTTPException } from 'hono/http-exception';
import { MemoryError } from '@mnemo/core';
import type { z } from 'zod';
import type { ServerApp, ServerContext } from '../app/server-deps.js';

/** HTTP methods the API uses. */
export type HttpMethod = 'get' | 'post' | 'patch' | 'delete';

/** One documented response of a route. */
export interface RouteResponse {
  readonly description: string;
  readonly schema?: z.ZodType;
  /** Default `application/json`. */
  readonly contentType?: string;
  /** Response headers worth documenting, by name, with their meaning. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A route as data: its method and OpenAPI path (`/v1/conversations/{id}`), zod schemas of its path
 * parameters, query and body, and its responses. The same spec validates requests and writes `/openapi.json`.
 */
export interface RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  readonly method: HttpMethod;
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly params?: P;
  readonly query?: Q;
  readonly body?: B;
  /** `json` (default): the body is parsed and checked with `body`; `jsonl`: the handler gets the raw text. */
  readonly bodyFormat?: 'json' | 'jsonl';
  /** Request headers worth documenting, by name, with their meaning. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly responses: Readonly<Record<number, RouteResponse>>;
  /**
   * True for routes served without an API key, rate limit or body limit (`/health`, `/metrics`,
   * `/openapi.json`, the inspector's page and assets, which hold no data). Only paths without parameters.
   */
  readonly public?: boolean;
}

/** Validated input of a route: parsed path parameters, query and body (raw text for a `jsonl` body). */
export interface RouteInput<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  readonly params: z.output<P>;
  readonly query: z.output<Q>;
  readonly body: z.output<B>;
  readonly text: string;
}

/** The routes registered on an app, in order, for `/openapi.json`. */
export interface RouteRegistry {
  add(spec: RouteSpec): void;
  list(): readonly RouteSpec[];
  /** True for the exact path of a registered `public` route without path parameters (served without an API key). */
  isPublic(path: string): boolean;
}

/** An empty {@link RouteRegistry}. */
export function createRouteRegistry(): RouteRegistry {
  const specs: RouteSpec[] = [];
  const publicPaths = new Set<string>();
  return {
    add: (spec) => {
      specs.push(spec);
      if (spec.public === true && !spec.path.includes('{')) publicPaths.add(spec.path);
    },
    list: () => [...specs],
    isPublic: (path) => publicPaths.has(path),
  };
}

/**
 * Registers a route on the app and in the registry: before the handler runs, path parameters, query and
 * body are checked with the spec's zod schemas; a body that is not JSON or a value that does not validate
 * is a 400 `invalid_input` naming the field (`body.messages[0].role: ...`).
 */
export function registerRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  app: ServerApp,
  registry: RouteRegistry,
  spec: RouteSpec<P, Q, B>,
  handler: (c: ServerContext, input: RouteInput<P, Q, B>) => Response | Promise<Response>,
): void {
  registry.add(spec);
  const honoPath = spec.path.replace(/\{([^}]+)\}/g, ':$1');
  app[spec.method](honoPath, async (c) => {
    if (spec.params !== undefined) checkPathEncoding(c.req.url);
    const params = parseWith(spec.params, c.req.param(), 'path');
    const query = parseWith(spec.query, c.req.query(), 'query');
    const text = spec.body === undefined && spec.bodyFormat !== 'jsonl' ? '' : await readBodyText(c);
    if (text.length > 0) checkBodyType(c.req.header('content-type'), spec.bodyFormat === 'jsonl');
    const body =
      spec.body === undefined || spec.bodyFormat === 'jsonl'
        ? undefined
        : parseWith(spec.body, parseJsonBody(text), 'body');
    return handler(c, { params, query, body, text } as RouteInput<P, Q, B>);
  });
}

// JSON lines may come as NDJSON, JSON Lines or plain JSON; everything else must say it is JSON.
const jsonType = /^application\/(?:[\w.+-]+\+)?json$/;
const jsonLinesType = /^application\/(?:x-ndjson|ndjson|jsonl|x-jsonlines|json-seq|json)$/;

/**
 * Refuses (415) a body whose Content-Type is not JSON. A browser page can send a "simple" cross-site
 * request without a CORS preflight only as text/plain, form data or url-encoded: parsing JSON from those
 * would let any page the user opens write into a keyless local server.
 */
export function checkBodyType(contentType: string | undefined, jsonLines: boolean): void {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if ((jsonLines ? jsonLinesType : jsonType).test(type)) return;
  const expected = jsonLines ? 'application/x-ndjson (or application/json)' : 'application/json';
  throw new HTTPException(415, {
    message: `the request body must be sent with Content-Type: ${expected} (got ${type === '' ? 'none' : JSON.stringify(type)})`,
  });
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Throws `invalid_input` for a path whose percent-escapes are not UTF-8 (`/v1/conversations/%FF`): the
 * router would hand such a segment over undecoded, and the id stored would not be the one the client meant.
 */
export function checkPathEncoding(url: string): void {
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2)).split(/[?#]/, 1)[0]!;
  try {
    decodeURIComponent(path);
  } catch {
    throw new MemoryError('invalid_input', 'the request path is not percent-encoded UTF-8', {
      details: { field: 'path' },
    });
  }
}

/**
 * Reads a request body as UTF-8 text; throws `invalid_input` for bytes that are not UTF-8 (decoded
 * leniently they would be stored as U+FFFD, which is not what the client sent).
 */
export async function readBodyText(c: ServerContext): Promise<string> {
  const bytes = await c.req.arrayBuffer();
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new MemoryError('invalid_input', 'request body is not valid UTF-8', { details: { field: 'body' } });
  }
}

/** Parses a JSON request body; an empty body reads as `{}`. Throws `invalid_input` for text that is not JSON. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new MemoryError('invalid_input', `request body is not valid JSON: ${(error as Error).message}`, {
      details: { field: 'body' },
    });
  }
}

/** Checks a value with a zod schema; throws `invalid_input` listing each failing field as `where.path: problem`. */
export function parseWith<T extends z.ZodType | undefined>(
  schema: T,
  value: unknown,
  where: string,
): T extends z.ZodType ? z.output<T> : undefined {
  if (schema === undefined) return undefined as never;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data as never;
  const fields = parsed.error.issues.map((issue) => formatPath(where, issue.path));
  const problems = parsed.error.issues.map((issue, index) => `${fields[index]}: ${issue.message}`);
  throw new MemoryError('invalid_input', problems.join('; '), { details: { fields } });
}

function formatPath(where: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (text, key) => (typeof key === 'number' ? `${text}[${key}]` : `${text}.${String(key)}`),
    where,
  );
}

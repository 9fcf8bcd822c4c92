import { z } from 'zod';
import type { RouteSpec } from './route-spec.js';

/** An OpenAPI 3.1 document, as plain JSON. */
export type OpenApiDocument = Readonly<Record<string, unknown>>;

const errorSchema = z.object({
  error: z.object({
    code: z
      .string()
      .describe('one of the documented error codes, e.g. invalid_input, not_found, unauthorized, rate_limited'),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

/**
 * Writes the OpenAPI 3.1 document of the given routes from their zod schemas (zod 4's `toJSONSchema`,
 * JSON Schema 2020-12, which OpenAPI 3.1 uses as is). Routes that are not `public` require the bearer key.
 */
export function buildOpenApiDocument(
  routes: readonly RouteSpec[],
  info: { title: string; version: string; description?: string },
): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] = { ...paths[route.path], [route.method]: buildOperation(route) };
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'an API key from the server config; it selects the tenant',
        },
      },
      schemas: { Error: toSchema(errorSchema, 'output') },
    },
  };
}

function buildOperation(route: RouteSpec): Record<string, unknown> {
  const parameters = [
    ...toParameters(route.params, 'path'),
    ...toParameters(route.query, 'query'),
    ...Object.entries(route.headers ?? {}).map(([name, description]) => ({
      name,
      in: 'header',
      required: false,
      description,
      schema: { type: 'string' },
    })),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    responses[status] = {
      description: response.description,
      ...(response.headers === undefined
        ? {}
        : {
            headers: Object.fromEntries(
              Object.entries(response.headers).map(([name, description]) => [
                name,
                { description, schema: { type: 'string' } },
              ]),
            ),
          }),
      ...(response.schema === undefined && response.contentType === undefined
        ? {}
        : {
            content: {
              [response.contentType ?? 'application/json']: {
                schema: response.schema === undefined ? { type: 'string' } : toSchema(response.schema, 'output'),
              },
            },
          }),
    };
  }
  responses.default = {
    description: 'an error',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
  return {
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    tags: [...route.tags],
    operationId: `${route.method}${route.path.replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+(.)?/g, (_match, next: string | undefined) => (next ?? '').toUpperCase())}`,
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(route.body === undefined && route.bodyFormat !== 'jsonl' ? {} : { requestBody: toRequestBody(route) }),
    responses,
    security: route.public === true ? [] : [{ apiKey: [] }],
  };
}

function toRequestBody(route: RouteSpec): Record<string, unknown> {
  if (route.bodyFormat === 'jsonl') {
    return {
      required: true,
      content: { 'application/x-ndjson': { schema: { type: 'string', description: 'one JSON message per line' } } },
    };
  }
  return { required: false, content: { 'application/json': { schema: toSchema(route.body as z.ZodType, 'input') } } };
}

function toParameters(schema: z.ZodType | undefined, location: 'path' | 'query'): Record<string, unknown>[] {
  if (schema === undefined) return [];
  const json = toSchema(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.has(name),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    schema: property,
  }));
}

function toSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return json;
}

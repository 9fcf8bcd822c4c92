import fc from 'fast-check';

// Generated bad requests over the routes of /openapi.json (issue 12, "Fuzzing"): wrong types, missing
// and extra fields, deep nesting, invalid UTF-8, NUL bytes, empty bodies, wrong content types, path
// parameters with ../ and %00, very long ids, unicode, header values with Latin-1 bytes. Sampled with
// fast-check from one seed, so a run is reproducible.

/** One route of the OpenAPI document: method, path template and the properties its body schema names. */
export interface FuzzRoute {
  readonly method: string;
  readonly path: string;
  readonly bodyProperties: readonly string[];
  /** True when the route needs no API key (`security: []`: /health, /metrics, the inspector's shell). */
  readonly public: boolean;
}

/** A request to send as it is: raw path (not normalized), headers (Latin-1 values allowed), raw body bytes. */
export interface BadRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer | undefined;
  /** What the generator aimed at, for the report when a request fails. */
  readonly kind: string;
  /** True when the request names a real stored conversation: it must then be refused or read-only. */
  readonly touchesStoredData: boolean;
}

/** Lists the routes of an OpenAPI document (every method of every path). */
export function routesOf(document: {
  paths: Record<
    string,
    Record<
      string,
      {
        security?: unknown[];
        requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> };
      }
    >
  >;
}): FuzzRoute[] {
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      bodyProperties: Object.keys(operation.requestBody?.content?.['application/json']?.schema?.properties ?? {}),
      public: Array.isArray(operation.security) && operation.security.length === 0,
    })),
  );
}

const badSegments = [
  '..',
  '../..',
  '%2e%2e%2f',
  '%00',
  'a%00b',
  '%FF%FE',
  '%C3%28',
  '..%2F..%2Fetc%2Fpasswd',
  '%E2%80%AE',
  '%F0%9F%92%A9',
  'x'.repeat(5000),
  '%20',
  '%0d%0aSet-Cookie:%20x=1',
  '%7B%7D',
  '',
];
const weirdStrings = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\uD800', '\uFFFD', '\u202E', '🐝'.repeat(300), ' ', '../../etc/passwd', '%00'),
);
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  weirdStrings,
  fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.anything({ maxDepth: 2 }), { maxKeys: 4 }),
);

/** Every byte of the UTF-8 form but letters and digits as %XX (a lone surrogate becomes U+FFFD's bytes). */
function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

function deepNesting(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** Invalid UTF-8 sequences: a lone continuation byte, an overlong NUL, a truncated 3-byte form, 0xFF. */
const invalidUtf8 = [
  Buffer.from([0x80]),
  Buffer.from([0xc0, 0x80]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0xed, 0xa0, 0x80]),
];

interface BodyChoice {
  readonly kind: string;
  readonly body: Buffer | undefined;
  readonly contentType: string | undefined;
  /** Bodies that cannot be valid anywhere; only these are sent to stored conversations. */
  readonly malformed: boolean;
}

function bodyArbitrary(route: FuzzRoute): fc.Arbitrary<BodyChoice> {
  const json = (kind: string, value: unknown, contentType = 'application/json'): BodyChoice => ({
    kind,
    body: Buffer.from(JSON.stringify(value)),
    contentType,
    malformed: false,
  });
  const fields = route.bodyProperties.length > 0 ? route.bodyProperties : ['messages', 'content'];
  const wrongTypes = fc
    .record(Object.fromEntries(fields.map((field) => [field, wrongValue])), { requiredKeys: [] })
    .map((value) => json('wrong types / missing fields', value));
  const extraFields = fc
    .dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.anything({ maxDepth: 3 }), { minKeys: 1, maxKeys: 6 })
    .map((value) => json('extra fields', value));
  const notAnObject = fc
    .oneof(fc.integer(), fc.string(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }))
    .map((value) => json('not an object', value));
  return fc.oneof(
    { weight: 5, arbitrary: wrongTypes },
    { weight: 2, arbitrary: extraFields },
    { weight: 1, arbitrary: notAnObject },
    {
      weight: 1,
      arbitrary: fc.constant<BodyChoice>({
        kind: 'empty body',
        body: Buffer.alloc(0),
        contentType: 'application/json',
        malformed: false,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.constant<BodyChoice>({
        kind: 'no body, no content type',
        body: undefined,
        contentType: undefined,
        malformed: false,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.string({ maxLength: 30 }).map((text): BodyChoice => ({
        kind: 'broken JSON',
        body: Buffer.from(`{"messages": [${text}`),
        contentType: 'application/json',
        malformed: true,
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 200, max: 20_000 }), fc.constantFrom<'array' | 'object'>('array', 'object'))
        .map(([depth, kind]): BodyChoice => ({
          kind: 'deep nesting',
          body: Buffer.from(deepNesting(depth, kind)),
          contentType: 'application/json',
          malformed: false,
        })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...invalidUtf8).map((bytes): BodyChoice => ({
        kind: 'invalid UTF-8',
        body: Buffer.concat([
          Buffer.from('{"messages":[{"role":"user","content":"'),
          bytes,
          Buffer.from('"}],"conversation_id":"c'),
          bytes,
          Buffer.from('","role":"user","content":"x"}'),
        ]),
        contentType: 'application/json',
        malformed: true,
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/xml',
          'application/json; charset=latin1',
          'image/png',
        )
        .map((contentType): BodyChoice => ({
          kind: 'wrong content type',
          body: Buffer.from(
            JSON.stringify({
              messages: [{ role: 'user', content: 'hello' }],
              conversation_id: 'c',
              role: 'user',
              content: 'x',
            }),
          ),
          contentType,
          malformed: contentType !== 'application/json; charset=latin1',
        })),
    },
    {
      weight: 1,
      arbitrary: fc.constant<BodyChoice>({
        kind: 'NUL bytes',
        body: Buffer.from('{"messages":[{"role":"user","content":"a\u0000b"}]}\u0000\u0000'),
        contentType: 'application/json',
        malformed: true,
      }),
    },
  );
}

const latin1HeaderValue = fc.constantFrom(
  'caf\u00e9',
  '\u00ff\u00fe',
  'na\u00efve-user',
  '\u00a0',
  '\u0080\u0081',
  'Bearer \u00e9t\u00e9',
);
const headerArbitrary: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          'x-mnemo-user',
          'x-mnemo-conversation',
          'idempotency-key',
          'x-mnemo-policy',
          'x-mnemo-max-tokens',
          'authorization',
          'x-request-id',
        ),
        latin1HeaderValue,
      )
      .map(([name, value]) => ({ [name]: value })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('x-mnemo-user', 'x-mnemo-conversation', 'idempotency-key'),
        fc.constantFrom('x'.repeat(4000), '', ' ', '..', '%00'),
      )
      .map(([name, value]) => ({ [name]: value })),
  },
);

const queryArbitrary = fc.oneof(
  { weight: 4, arbitrary: fc.constant('') },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          'limit',
          'after_seq',
          'cursor',
          'user_id',
          'conversation',
          'query',
          'q',
          'policy',
          'maxTokens',
          'seq',
          'afterSeq',
          'search',
        ),
        fc.constantFrom(
          '-1',
          '0',
          '1e309',
          'abc',
          '%00',
          '%FF',
          'x'.repeat(3000),
          '9999999999999999999',
          '',
          '[]',
          '%C3%28',
        ),
      )
      .map(([name, value]) => `?${name}=${value}`),
  },
);

/**
 * The generator of bad requests: a route, its path parameters (bad segments, or one of `storedIds` with a
 * malformed body), a query, headers and a body. `storedIds` are conversations whose data must survive.
 */
export function badRequestArbitrary(
  routes: readonly FuzzRoute[],
  storedIds: readonly string[],
): fc.Arbitrary<BadRequest> {
  return fc.constantFrom(...routes).chain((route) =>
    fc
      .record({
        segment: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...badSegments) },
          { weight: 2, arbitrary: weirdStrings.map(percentEncode) },
          { weight: 1, arbitrary: fc.constantFrom(...storedIds).map((id) => `stored:${id}`) },
        ),
        query: queryArbitrary,
        headers: headerArbitrary,
        body: bodyArbitrary(route),
      })
      .map(({ segment, query, headers, body }): BadRequest => {
        const stored = segment.startsWith('stored:');
        const hasParameter = route.path.includes('{');
        const touchesStoredData = stored && hasParameter;
        // A real conversation only gets a POST whose body is malformed whatever the route, or a read: a
        // DELETE reads no body, so any DELETE of it is a valid erase.
        const readInstead =
          touchesStoredData && (route.method === 'DELETE' || (route.method !== 'GET' && !body.malformed));
        const method = readInstead ? 'GET' : route.method;
        const sendsBody = method !== 'GET';
        const path = route.path.replace(/\{[^}]+\}/g, stored ? segment.slice('stored:'.length) : segment);
        const contentType = sendsBody ? body.contentType : undefined;
        const kind = [
          touchesStoredData ? 'stored id' : hasParameter ? 'bad path parameter' : '',
          sendsBody ? body.kind : '',
          query === '' ? '' : 'bad query',
          Object.keys(headers).length > 0 ? 'odd header' : '',
        ]
          .filter((part) => part !== '')
          .join(' + ');
        return {
          method,
          path: `${path}${query}`,
          headers: { ...headers, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
          body: sendsBody ? body.body : undefined,
          kind: kind === '' ? 'plain' : kind,
          touchesStoredData,
        };
      }),
  );
}

/** A few huge bodies (1–20 MB) of JSON with one huge string, on the append and seed routes. */
export function hugeRequests(seed: number): BadRequest[] {
  const extraBytes = fc.sample(fc.integer({ min: 0, max: 999 }), { seed, numRuns: 4 });
  const sizes = [1, 5, 12, 20].map((megabytes, index) => megabytes * 1024 * 1024 + extraBytes[index]!);
  return sizes.map((size, index) => {
    const path = index % 2 === 0 ? '/v1/conversations/huge-one/messages' : '/v1/memory/add';
    const body = Buffer.from(
      JSON.stringify(
        index % 2 === 0
          ? { messages: [{ role: 'user', content: 'h'.repeat(size) }] }
          : { conversation_id: 'huge-two', role: 'user', content: 'h'.repeat(size) },
      ),
    );
    return {
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json' },
      body,
      kind: `huge string (${Math.round(size / 1024 / 1024)} MB)`,
      touchesStoredData: false,
    };
  });
}

import { isMemoryError, type ErrorCode, type ErrorDetails } from '@mnemo/core';
import type { Context } from 'hono';

/**
 * Codes only the HTTP edge produces: a body over the size limit, a body that is not JSON by its
 * Content-Type, a Host the server does not answer to, a key over its rate, an upstream LLM that did not
 * answer the proxy in time, and a bug.
 */
export const httpOnlyErrorCodes = [
  'payload_too_large',
  'unsupported_media_type',
  'misdirected_request',
  'rate_limited',
  'upstream_timeout',
  'internal',
] as const;

/** Every `error.code` a client can receive: core's closed set plus {@link httpOnlyErrorCodes}. */
export type WireErrorCode = ErrorCode | (typeof httpOnlyErrorCodes)[number];

/** The JSON body of every error response. */
export interface ErrorBody {
  readonly error: { readonly code: WireErrorCode; readonly message: string; readonly details?: ErrorDetails };
}

// A Record over every code: a code added to core fails the build here until it has a status.
const statusByCode: Readonly<
  Record<WireErrorCode, 400 | 401 | 403 | 404 | 409 | 413 | 415 | 421 | 422 | 429 | 500 | 502 | 503 | 504>
> = Object.freeze({
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  misdirected_request: 421,
  budget_exceeded: 422,
  rate_limited: 429,
  storage_failed: 500,
  internal: 500,
  model_failed: 502,
  unavailable: 503,
  upstream_timeout: 504,
});

/** The HTTP status a wire error code is sent with (the one mapping from codes to statuses). */
export function statusForCode(code: WireErrorCode): (typeof statusByCode)[WireErrorCode] {
  return statusByCode[code];
}

/** What to send for a failure: its status, body and headers; `log` is true when the server, not the client, is at fault. */
export interface ErrorResponse {
  readonly status: (typeof statusByCode)[WireErrorCode];
  readonly body: ErrorBody;
  /** `Retry-After` (seconds) on every 503: the error's `details.retryAfterSeconds`, else 1. */
  readonly headers: Readonly<Record<string, string>>;
  readonly log: boolean;
}

/** The `Retry-After` header of an `unavailable` error: its `details.retryAfterSeconds` (a positive integer), else 1 s. */
export function retryAfterHeader(details: ErrorDetails | undefined): Record<string, string> {
  const given = details?.['retryAfterSeconds'];
  const seconds = typeof given === 'number' && Number.isInteger(given) && given > 0 ? given : 1;
  return { 'Retry-After': String(seconds) };
}

/**
 * Maps any thrown value to a response: a MemoryError keeps its code, message and details (an
 * `unavailable` one, a 503, gets `Retry-After`); storage
 * failures and unknown errors (bugs) become a message naming the request id, so a driver's text
 * (paths, SQL) never reaches a client, and are flagged for the log.
 */
export function toErrorResponse(error: unknown, requestId: string): ErrorResponse {
  if (isMemoryError(error) && error.code !== 'storage_failed') {
    const headers = error.code === 'unavailable' ? retryAfterHeader(error.details) : {};
    return {
      status: statusForCode(error.code),
      body: errorBody(error.code, error.message, error.details),
      headers,
      log: statusForCode(error.code) >= 500,
    };
  }
  const code: WireErrorCode = isMemoryError(error) ? 'storage_failed' : 'internal';
  const what = code === 'storage_failed' ? 'the store failed' : 'internal error';
  return {
    status: statusForCode(code),
    body: errorBody(code, `${what}; the server log has the cause (request id ${requestId})`),
    headers: {},
    log: true,
  };
}

/** An error body with the given code and message (and details, when there are any). */
export function errorBody(code: WireErrorCode, message: string, details?: ErrorDetails): ErrorBody {
  return { error: { code, message, ...(details === undefined ? {} : { details: jsonSafe(details) }) } };
}

/** Sends a typed error response on a Hono context, with extra headers (e.g. `Retry-After`). */
export function errorResponse(
  c: Context,
  code: WireErrorCode,
  message: string,
  options: { details?: ErrorDetails; headers?: Record<string, string> } = {},
): Response {
  return c.json(errorBody(code, message, options.details), statusForCode(code), options.headers);
}

// Details are written by mnemo's own code, but may hold a value that JSON cannot carry (a bigint, a cycle).
function jsonSafe(details: ErrorDetails): ErrorDetails {
  try {
    return JSON.parse(JSON.stringify(details)) as ErrorDetails;
  } catch {
    return {};
  }
}

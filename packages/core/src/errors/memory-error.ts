/** The closed set of error codes every mnemo package speaks; edges map them to HTTP, MCP or exit codes. */
export const errorCodes = [
  'invalid_input',
  'not_found',
  'conflict',
  'budget_exceeded',
  'storage_failed',
  'model_failed',
  'unauthorized',
  'forbidden',
  'unavailable',
] as const;

/** One of {@link errorCodes}. */
export type ErrorCode = (typeof errorCodes)[number];

/** Extra, machine-readable facts about an error (field names, limits, offending values). */
export type ErrorDetails = Readonly<Record<string, unknown>>;

/**
 * The one error type mnemo throws. `code` says what the caller can do about it; `cause` keeps the
 * driver or network error underneath; `details` carries the fields a caller needs to fix its input.
 */
export class MemoryError extends Error {
  override readonly name = 'MemoryError';
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: ErrorDetails } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

/** True when `error` is a {@link MemoryError}, optionally with the given code. */
export function isMemoryError(error: unknown, code?: ErrorCode): error is MemoryError {
  return error instanceof MemoryError && (code === undefined || error.code === code);
}

/**
 * Wraps any error thrown by a driver into a `storage_failed` MemoryError (a MemoryError passes through
 * unchanged), so adapters never leak driver types and never swallow a failure.
 */
export function toStorageError(error: unknown, action: string): MemoryError {
  if (error instanceof MemoryError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new MemoryError('storage_failed', `${action} failed: ${reason}`, { cause: error });
}

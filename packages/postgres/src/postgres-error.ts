import { MemoryError } from '@mnemo/core';
import { toStorageError } from '@mnemo/core/store-kit';

/** The SQLSTATE of a PostgreSQL error (`40001`, `23505`, …), or `undefined` for any other error. */
export function postgresErrorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const { code } = error;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

// SQLSTATEs after which the same call can succeed a moment later: the transaction lost a race or a lock
// wait, the statement ran past its timeout, or the server is restarting or out of connections.
const retryableStates: Readonly<Record<string, string>> = {
  '40001': 'a concurrent transaction made it impossible to serialize',
  '40P01': 'it deadlocked with a concurrent transaction',
  '55P03': 'a lock stayed held past the lock timeout',
  '57014': 'the statement ran past the statement timeout (or was cancelled)',
  '57P01': 'the server is shutting down',
  '57P02': 'the server is shutting down',
  '57P03': 'the server is not accepting connections yet',
  '53300': 'the server has too many connections',
  '53100': 'the disk of the PostgreSQL server is full; free some space',
  '53200': 'the PostgreSQL server is out of memory',
};

// SQLSTATEs of values that are valid for the port but that PostgreSQL cannot store.
const unstorableStates: Readonly<Record<string, string>> = {
  '22021': 'PostgreSQL cannot store this text: it contains a NUL character',
  '22P05': 'PostgreSQL cannot store this text: it contains a NUL character',
  '22007': 'PostgreSQL cannot store this time',
  '22008': 'PostgreSQL cannot store this time: it is out of its range',
};

// Socket-level failures reported by Node, and pg's own messages for a connection that went away.
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);
const connectionLost =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * Wraps a driver error into a MemoryError (a MemoryError passes through): lost races, lock and statement
 * timeouts, restarts and unreachable servers are `unavailable` (retryable); text or times PostgreSQL cannot
 * store (a NUL character, a year past 9999) are `invalid_input`; anything else is `storage_failed` via `toStorageError`. The driver
 * error is always the `cause`. Unique violations stay `storage_failed` here: the call sites where the port
 * calls such a race a `conflict` map it themselves.
 */
export function toPostgresError(error: unknown, action: string): MemoryError {
  if (error instanceof MemoryError) return error;
  const sqlState = postgresErrorCode(error);
  const reason = error instanceof Error ? error.message : String(error);
  const retryable =
    sqlState === undefined
      ? undefined
      : (retryableStates[sqlState] ?? (sqlState.startsWith('08') ? 'the connection failed' : undefined));
  if (retryable !== undefined) {
    const diskFull = sqlState === '53100';
    return new MemoryError('unavailable', `${action} failed: ${retryable} (${reason}); retry`, {
      cause: error,
      details: {
        sqlState,
        retryable: true,
        ...(diskFull ? { reason: 'disk_full', retryAfterSeconds: 30 } : { retryAfterSeconds: 1 }),
      },
    });
  }
  const networkCode = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
  if (
    (networkCode !== undefined && networkCodes.has(networkCode)) ||
    (sqlState === undefined && connectionLost.test(reason))
  ) {
    return new MemoryError(
      'unavailable',
      `${action} failed: the PostgreSQL server could not be reached (${reason}); retry`,
      {
        cause: error,
        details: { ...(networkCode === undefined ? {} : { networkCode }), retryable: true, retryAfterSeconds: 1 },
      },
    );
  }
  const unstorable = sqlState === undefined ? undefined : unstorableStates[sqlState];
  if (unstorable !== undefined) {
    return new MemoryError('invalid_input', `${action} failed: ${unstorable} (${reason})`, {
      cause: error,
      details: { sqlState },
    });
  }
  const wrapped = toStorageError(error, action);
  return sqlState === undefined
    ? wrapped
    : new MemoryError('storage_failed', wrapped.message, { cause: error, details: { sqlState } });
}

/** True when `error` is a unique violation (SQLSTATE 23505), optionally of the named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (postgresErrorCode(error) !== '23505') return false;
  return constraint === undefined || (error as { constraint?: unknown }).constraint === constraint;
}

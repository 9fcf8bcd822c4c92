import { MemoryError } from '@mnemo/core';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

/** What {@link toModelError} needs to say which call failed. */
export interface ModelCallDescription {
  readonly baseUrl: string;
  readonly model: string;
  readonly timeoutMs: number;
  /** Attempts the SDK made in all: retries plus one. */
  readonly attempts: number;
}

/**
 * Maps an error of the openai SDK to a {@link MemoryError} (a MemoryError passes through): 401 and 403
 * become `unauthorized`; timeouts, connection failures, error statuses (after the SDK's retries) and
 * bodies that are not JSON become `model_failed`. The SDK error is kept as `cause`, the status in `details`.
 */
export function toModelError(error: unknown, call: ModelCallDescription): MemoryError {
  if (error instanceof MemoryError) return error;
  const where = `model ${call.model} at ${call.baseUrl}`;
  if (error instanceof APIUserAbortError) {
    return new MemoryError('model_failed', `the call to ${where} was aborted`, {
      cause: error,
      details: { aborted: true },
    });
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new MemoryError(
      'model_failed',
      `${where} did not answer within ${call.timeoutMs} ms (${attemptsText(call.attempts)})`,
      {
        cause: error,
        details: { timeoutMs: call.timeoutMs, attempts: call.attempts },
      },
    );
  }
  if (error instanceof APIConnectionError) {
    const reason = error.cause instanceof Error ? describeCause(error.cause) : error.message;
    return new MemoryError('model_failed', `cannot reach ${call.baseUrl} (${attemptsText(call.attempts)}): ${reason}`, {
      cause: error,
      details: { attempts: call.attempts },
    });
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const status = error.status;
    const reason = providerMessage(error);
    if (status === 401 || status === 403) {
      const problem = status === 401 ? 'rejected the API key' : 'refused access';
      return new MemoryError('unauthorized', `${call.baseUrl} ${problem} (HTTP ${status}): ${reason}`, {
        cause: error,
        details: { status },
      });
    }
    const retried =
      status === 408 || status === 409 || status === 429 || status >= 500 ? ` (${attemptsText(call.attempts)})` : '';
    return new MemoryError('model_failed', `${where} failed with HTTP ${status}${retried}: ${reason}`, {
      cause: error,
      details: { status },
    });
  }
  if (error instanceof SyntaxError) {
    return new MemoryError('model_failed', `${where} answered with a body that is not JSON: ${error.message}`, {
      cause: error,
    });
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new MemoryError('model_failed', `the call to ${where} failed: ${reason}`, { cause: error });
}

function attemptsText(attempts: number): string {
  return attempts === 1 ? '1 attempt' : `${attempts} attempts`;
}

/** The provider's own error message, without the SDK's status prefix. */
function providerMessage(error: { readonly error: unknown; readonly message: string }): string {
  const body = error.error;
  if (
    typeof body === 'object' &&
    body !== null &&
    'message' in body &&
    typeof body.message === 'string' &&
    body.message.length > 0
  )
    return body.message;
  return error.message.replace(/^\d{3}\s+/, '');
}

// undici reports "fetch failed" with the socket error (ECONNREFUSED, ENOTFOUND) one level down.
function describeCause(cause: Error): string {
  const inner = (cause as { cause?: unknown }).cause;
  return inner instanceof Error ? `${cause.message}: ${inner.message}` : cause.message;
}

import { MemoryError } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { toErrorResponse } from './error-response.js';

describe('toErrorResponse', () => {
  it('keeps the code, message and details of a client error', () => {
    const error = new MemoryError('invalid_input', 'message 0: content must not be empty', {
      details: { field: 'content', index: 0 },
    });
    expect(toErrorResponse(error, 'req-1')).toEqual({
      status: 400,
      body: {
        error: {
          code: 'invalid_input',
          message: 'message 0: content must not be empty',
          details: { field: 'content', index: 0 },
        },
      },
      headers: {},
      log: false,
    });
    expect(toErrorResponse(new MemoryError('not_found', 'x'), 'r').status).toBe(404);
    expect(toErrorResponse(new MemoryError('conflict', 'x'), 'r').status).toBe(409);
    expect(toErrorResponse(new MemoryError('unavailable', 'closed'), 'r')).toMatchObject({
      status: 503,
      headers: { 'Retry-After': '1' },
      log: true,
    });
    const diskFull = new MemoryError('unavailable', 'the disk holding the database is full', {
      details: { reason: 'disk_full', retryAfterSeconds: 30 },
    });
    expect(toErrorResponse(diskFull, 'r')).toMatchObject({
      status: 503,
      headers: { 'Retry-After': '30' },
      body: { error: { details: { reason: 'disk_full' } } },
    });
  });

  it('hides the text of storage failures and bugs behind the request id', () => {
    const storage = toErrorResponse(
      new MemoryError('storage_failed', 'appending messages failed: SQLITE_CORRUPT at /srv/db'),
      'req-7',
    );
    const bug = toErrorResponse(new TypeError("Cannot read properties of undefined (reading 'seq')"), 'req-8');

    expect(storage).toEqual({
      status: 500,
      body: {
        error: { code: 'storage_failed', message: 'the store failed; the server log has the cause (request id req-7)' },
      },
      headers: {},
      log: true,
    });
    expect(bug.body.error).toEqual({
      code: 'internal',
      message: 'internal error; the server log has the cause (request id req-8)',
    });
  });
});

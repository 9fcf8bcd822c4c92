import { describe, expect, it, vi } from 'vitest';
import { watchNpxStarter } from './watch-npx-starter.js';

const status = (wakes: number, caught = '0000000000010002') =>
  `Name:\tsh\nSigCgt:\t${caught}\nvoluntary_ctxt_switches:\t${wakes}\n`;

/** A fake /proc whose parent shell's status the test changes. */
function fakeProc(initial: string) {
  const state = { status: initial as string | undefined, comm: 'sh\n', ppid: 41 };
  return {
    state,
    readProc: (pid: number, file: string) => (pid !== 41 ? undefined : file === 'comm' ? state.comm : state.status),
    parentPid: () => state.ppid,
  };
}

describe('watchNpxStarter', () => {
  it('stops once as interrupted when the npx shell wakes, and as gone when it exits', () => {
    vi.useFakeTimers();
    try {
      for (const [change, expected] of [
        [(state: { status: string | undefined; ppid: number }) => (state.status = status(3)), 'starter-interrupted'],
        [(state: { status: string | undefined; ppid: number }) => (state.ppid = 1), 'starter-gone'],
      ] as const) {
        const proc = fakeProc(status(2));
        const onStop = vi.fn();
        watchNpxStarter({
          env: { npm_lifecycle_event: 'npx' },
          onStop,
          readProc: proc.readProc,
          parentPid: proc.parentPid,
        });
        vi.advanceTimersByTime(500);
        expect(onStop).not.toHaveBeenCalled();
        change(proc.state);
        vi.advanceTimersByTime(500);
        expect(onStop.mock.calls).toEqual([[expected]]);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('does nothing outside npx, under another parent, or when the shell does not catch SIGINT', () => {
    vi.useFakeTimers();
    try {
      const cases = [
        { env: {}, comm: 'sh\n', caught: '0000000000010002' },
        { env: { npm_lifecycle_event: 'npx' }, comm: 'node\n', caught: '0000000000010002' },
        { env: { npm_lifecycle_event: 'npx' }, comm: 'sh\n', caught: '0000000000010000' },
      ];
      for (const { env, comm, caught } of cases) {
        const proc = fakeProc(status(2, caught));
        proc.state.comm = comm;
        const onStop = vi.fn();
        watchNpxStarter({ env, onStop, readProc: proc.readProc, parentPid: proc.parentPid });
        proc.state.status = status(9, caught);
        proc.state.ppid = 1;
        vi.advanceTimersByTime(1000);
        expect(onStop, JSON.stringify({ env, comm, caught })).not.toHaveBeenCalled();
      }
    } finally {
      vi.useRealTimers();
    }
  });
});

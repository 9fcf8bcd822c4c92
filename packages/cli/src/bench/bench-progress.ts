import cliProgress from 'cli-progress';
import type { CliStream } from '../cli-io.js';

/** Progress of a benchmark on stderr; every method is a no-op when it is turned off. */
export interface BenchProgress {
  update(done: number, total: number, label: string): void;
  stop(): void;
}

/**
 * A progress bar on a terminal; on a pipe or log, one plain line each time `label` changes (no control
 * characters); nothing at all when `enabled` is false.
 */
export function createBenchProgress(stream: NodeJS.WritableStream & CliStream, enabled: boolean): BenchProgress {
  if (!enabled) return { update: () => undefined, stop: () => undefined };
  if (stream.isTTY !== true) {
    let current: string | undefined;
    const started = performance.now();
    return {
      update(done, total, label) {
        if (label === current) return;
        current = label;
        stream.write(
          `mnemo bench: ${label} (${done}/${total} steps, ${((performance.now() - started) / 1000).toFixed(0)} s)\n`,
        );
      },
      stop: () => undefined,
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: 'locomo [{bar}] {value}/{total} steps | {label} | {duration_formatted}',
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total, label) {
      if (!started) {
        bar.start(total, done, { label });
        started = true;
      } else bar.update(done, { label });
    },
    stop: () => bar.stop(),
  };
}

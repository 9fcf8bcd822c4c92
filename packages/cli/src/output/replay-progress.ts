import cliProgress from 'cli-progress';
import type { CliStream } from '../cli-io.js';

/** Progress of a long-running loop; every method is a no-op when the bar is not shown. */
export interface ReplayProgress {
  update(done: number): void;
  stop(): void;
}

/** Options of {@link createReplayProgress}. */
export interface ReplayProgressOptions {
  readonly total: number;
  readonly stream: NodeJS.WritableStream & CliStream;
  /** False turns the bar off (e.g. with `--json`). */
  readonly enabled: boolean;
  /** Totals below this get no bar; default 200 messages. */
  readonly minimumTotal?: number;
}

/**
 * A progress bar on `stream` for replays of at least `minimumTotal` messages, shown only when the stream
 * is a terminal, so pipes and logs never receive control characters.
 */
export function createReplayProgress(options: ReplayProgressOptions): ReplayProgress {
  const shown = options.enabled && options.stream.isTTY === true && options.total >= (options.minimumTotal ?? 200);
  if (!shown) return { update: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    {
      stream: options.stream,
      format: 'replay [{bar}] {value}/{total} messages',
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(options.total, 0);
  return {
    update: (done) => bar.update(done),
    stop: () => bar.stop(),
  };
}

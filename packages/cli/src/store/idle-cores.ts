import { cpus } from 'node:os';

/** Options of {@link watchIdleCores}. */
export interface IdleCoresOptions {
  /** How often the machine's CPU times are read, in ms; default 1,000. */
  readonly intervalMs?: number;
  /**
   * Idle while everything but this process keeps less than this share of the machine's cores busy (default
   * 0.25: on 2 cores, half a core), over the last interval; 0 is never idle, 1 always.
   */
  readonly maxOthersShare?: number;
}

/** Whether the machine has cores to spare, read every interval; `stop()` ends the readings. */
export interface IdleCores {
  idle(): boolean;
  stop(): void;
}

/**
 * Watches the machine's CPU (all cores' busy time, from `os.cpus()`) less this process's own (its threads
 * included, from `process.cpuUsage()`): the work the refine job may take cores from without slowing anyone
 * (a server's HTTP process, a load generator, another program). The refine job's own use of a core is this
 * process's, so it does not stop itself. Until the first reading: not idle.
 */
export function watchIdleCores(options: IdleCoresOptions = {}): IdleCores {
  const intervalMs = options.intervalMs ?? 1000;
  const maxOthersShare = options.maxOthersShare ?? 0.25;
  let last = { machine: machineTimes(), own: process.cpuUsage() };
  let idle = false;
  const timer = setInterval(() => {
    const now = { machine: machineTimes(), own: process.cpuUsage() };
    const total = now.machine.total - last.machine.total;
    const busy = total - (now.machine.idle - last.machine.idle);
    // cpus() counts in ms per core, cpuUsage() in µs of all of this process's threads.
    const own = (now.own.user - last.own.user + now.own.system - last.own.system) / 1000;
    idle = maxOthersShare >= 1 || (total > 0 && Math.max(0, busy - own) / total < maxOthersShare);
    last = now;
  }, intervalMs);
  timer.unref();
  return { idle: () => idle, stop: () => clearInterval(timer) };
}

function machineTimes(): { total: number; idle: number } {
  let total = 0;
  let idle = 0;
  for (const { times } of cpus()) {
    total += times.user + times.nice + times.sys + times.irq + times.idle;
    idle += times.idle;
  }
  return { total, idle };
}

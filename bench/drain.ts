// npm run bench:drain -- --db FILE: how fast `mnemo worker` drains a background backlog. FILE is a SQLite
// store as a load left it (bench:serve --save-db FILE); each run drains its own copy with one `mnemo
// worker` process at niceness 10, as `mnemo serve` starts it, and polls the file until no job is pending
// or running. --cli a.js,b.js drains with several builds, alternately, --repeat times each (before and
// after back to back on the same backlog); --worker-args '--embedding-threads 1' adds arguments;
// --seconds (default 180) bounds a run; --cpu-prof DIR profiles the workers (read with
// bench/cpu-profile-summary.ts). Prints a table (and JSON with --json); writes bench/results/drain.json (or --out).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { setPriority, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const resultsPath = fileURLToPath(new URL('./results/drain.json', import.meta.url));
const defaultCli = fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url));
// As `mnemo serve` starts its workers (packages/cli/src/workers/start-worker-processes.ts).
const workerNiceness = 10;

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    cli: { type: 'string', default: defaultCli },
    repeat: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '180' },
    'worker-args': { type: 'string' },
    'cpu-prof': { type: 'string' },
    json: { type: 'boolean', default: false },
    out: { type: 'string', default: resultsPath },
  },
});

interface Snapshot {
  readonly at: number;
  readonly embedded: number;
  readonly byKind: Readonly<Record<string, number>>;
}

interface DrainRun {
  readonly cli: string;
  readonly backlogJobs: Readonly<Record<string, number>>;
  readonly unembedded: number;
  /** From the worker's start until no job was pending or running (null: not within --seconds). */
  readonly drainSeconds: number | null;
  /** From the first vector the worker wrote (its model loaded) until the embed jobs were done. */
  readonly embedSeconds: number | null;
  readonly embeddingsPerSecond: number;
  /** Seconds from the start at which each kind had no job pending or running. */
  readonly kindDrainedSeconds: Readonly<Record<string, number>>;
  readonly failedJobs: number;
  readonly workerCpuSeconds: number;
}

if (values.db === undefined) throw new Error('--db FILE is required: a SQLite store saved by bench:serve --save-db');
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
const clis = values.cli.split(',');
const runs: DrainRun[] = [];
const directory = await mkdtemp(join(tmpdir(), 'mnemo-bench-drain-'));
try {
  for (let round = 0; round < Number(values.repeat); round += 1) {
    for (const cli of clis) {
      const run = await drainOnce(cli, join(directory, `drain-${round}-${runs.length}.db`));
      log(formatRun(run));
      runs.push(run);
    }
  }
} finally {
  await rm(directory, { recursive: true, force: true });
}
await mkdir(dirname(values.out), { recursive: true });
await writeFile(
  values.out,
  `${JSON.stringify({ db: values.db, workerArgs: values['worker-args'] ?? '', runs }, null, 2)}\n`,
);
log(`\n${formatTable(runs)}`);
if (values.json) process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);

async function drainOnce(cli: string, file: string): Promise<DrainRun> {
  await copyFile(values.db!, file);
  const before = read(file);
  const unembedded = countMessages(file) - before.embedded;
  const profile = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`];
  const extra = values['worker-args']?.split(' ').filter((argument) => argument !== '') ?? [];
  const started = performance.now();
  const child = spawn(process.execPath, [...profile, cli, 'worker', '--db', file, ...extra], {
    cwd: directory,
    env: { PATH: process.env.PATH ?? '', HOME: directory },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (child.pid !== undefined) setPriority(child.pid, workerNiceness);
  const exited = new Promise<void>((resolvePromise) => child.once('exit', () => resolvePromise()));
  const kindDrainedSeconds: Record<string, number> = {};
  let firstVectorAt: number | undefined;
  let embedDoneAt: number | undefined;
  let last = before;
  let drainSeconds: number | null = null;
  let workerCpuSeconds = 0;
  try {
    while (performance.now() - started < Number(values.seconds) * 1000) {
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 250));
      last = read(file);
      if (firstVectorAt === undefined && last.embedded > before.embedded) firstVectorAt = last.at;
      const elapsed = round((last.at - started) / 1000);
      for (const [kind, count] of Object.entries(last.byKind)) if (count === 0) kindDrainedSeconds[kind] ??= elapsed;
      if (embedDoneAt === undefined && (last.byKind.embed ?? 0) === 0) embedDoneAt = last.at;
      if (Object.values(last.byKind).every((count) => count === 0)) {
        drainSeconds = elapsed;
        break;
      }
    }
  } finally {
    workerCpuSeconds = readCpuSeconds(child.pid!);
    // A worker whose event loop never yields does not see SIGTERM: killed after 5 s (its profile is then lost).
    const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.kill('SIGTERM');
    await exited;
    clearTimeout(kill);
  }
  const embedEnd = embedDoneAt ?? last.at;
  const embedSeconds =
    firstVectorAt === undefined || embedDoneAt === undefined ? null : round((embedDoneAt - firstVectorAt) / 1000);
  const span = firstVectorAt === undefined ? 0 : (embedEnd - firstVectorAt) / 1000;
  return {
    cli,
    backlogJobs: before.byKind,
    unembedded,
    drainSeconds,
    embedSeconds,
    embeddingsPerSecond: span > 0 ? Math.round((last.embedded - before.embedded) / span) : 0,
    kindDrainedSeconds,
    failedJobs: countFailed(file),
    workerCpuSeconds,
  };
}

/** Stored vectors and the jobs pending or running per kind, read beside the running worker. */
function read(file: string): Snapshot {
  return withDatabase(file, (database) => {
    const embedded = count(database, 'SELECT count(*) AS n FROM message_vectors');
    const rows = database
      .prepare(`SELECT kind, count(*) AS n FROM jobs WHERE status IN ('pending', 'running') GROUP BY kind`)
      .all() as {
      kind: string;
      n: number;
    }[];
    const byKind: Record<string, number> = { compact: 0, embed: 0, extract: 0 };
    for (const row of rows) byKind[row.kind] = row.n;
    return { at: performance.now(), embedded, byKind };
  });
}

function countMessages(file: string): number {
  return withDatabase(file, (database) => count(database, 'SELECT count(*) AS n FROM messages'));
}

/** Jobs given up, and jobs waiting for a retry after a failed attempt. */
function countFailed(file: string): number {
  return withDatabase(file, (database) =>
    count(
      database,
      `SELECT count(*) AS n FROM jobs WHERE status = 'failed' OR (status = 'pending' AND attempts > 0 AND last_error IS NOT NULL)`,
    ),
  );
}

function withDatabase<T>(file: string, use: (database: Database.Database) => T): T {
  const database = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return use(database);
  } finally {
    database.close();
  }
}

function count(database: Database.Database, sql: string): number {
  return (database.prepare(sql).get() as { n: number }).n;
}

/** User + system CPU seconds of a process (all its threads), from /proc; 0 where there is none. */
function readCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return round((Number(fields[11]) + Number(fields[12])) / 100);
  } catch {
    return 0;
  }
}

function formatRun(run: DrainRun): string {
  return `${run.cli}: ${run.unembedded} messages to embed, jobs ${Object.entries(run.backlogJobs)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ')}: drained in ${run.drainSeconds ?? `more than ${values.seconds}`} s`;
}

function formatTable(all: readonly DrainRun[]): string {
  const header = [
    'cli',
    'to embed',
    'drained s',
    'embed s',
    'embeddings/s',
    'embed empty s',
    'extract empty s',
    'compact empty s',
    'failed',
    'worker cpu s',
  ];
  const cells = all.map((run) => [
    run.cli.replace(/\/packages\/cli\/dist\/main\.js$/, ''),
    String(run.unembedded),
    run.drainSeconds === null ? `> ${values.seconds}` : String(run.drainSeconds),
    run.embedSeconds === null ? '–' : String(run.embedSeconds),
    String(run.embeddingsPerSecond),
    String(run.kindDrainedSeconds.embed ?? '–'),
    String(run.kindDrainedSeconds.extract ?? '–'),
    String(run.kindDrainedSeconds.compact ?? '–'),
    String(run.failedJobs),
    String(run.workerCpuSeconds),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => row[column]!.length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)].join('\n');
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

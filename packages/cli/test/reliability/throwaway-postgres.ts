import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

// A PostgreSQL cluster of the suite's own, for faults that must not touch the shared one (a restart):
// initdb into a temporary directory, started with pg_ctl on a free loopback port, trust authentication,
// the vector extension created when it is installed. Run as the `postgres` user when the suite runs as
// root (initdb refuses root), as in CI.

const run = promisify(execFile);

/** A started throwaway cluster. */
export interface ThrowawayPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  readonly url: string;
  readonly port: number;
  /** `pg_ctl restart -m fast`: every connection is terminated (57P01); resolves once the server accepts connections again. */
  restart(): Promise<void>;
  /** Stops the cluster (immediate) and removes its directory. */
  remove(): Promise<void>;
}

/** The directory of PostgreSQL's server programs (initdb, pg_ctl) of the newest installed major, or `undefined`. */
export async function postgresBinDirectory(): Promise<string | undefined> {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = (await readdir(root)).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
  return majors
    .map((major) => join(root, major, 'bin'))
    .find((bin) => existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl')));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Starts a throwaway cluster (about 1–2 s for initdb and start). */
export async function startThrowawayPostgres(bin: string): Promise<ThrowawayPostgres> {
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-pg-'));
  const data = join(directory, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await run('chown', ['postgres:postgres', directory]);
  const as = (program: string, args: readonly string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', join(bin, program), ...args], { cwd: '/' })
      : run(join(bin, program), [...args]);
  await as('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const serverOptions = `-c port=${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${directory} -c fsync=off -c max_connections=60`;
  const log = join(directory, 'server.log');
  const ctl = (...args: string[]) =>
    as('pg_ctl', ['-D', data, '-o', serverOptions, '-l', log, '-w', '-t', '60', ...args]);
  await ctl('start');
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const available = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    if ((available.rowCount ?? 0) > 0) await client.query('CREATE EXTENSION IF NOT EXISTS vector');
  } finally {
    await client.end();
  }
  return {
    url,
    port,
    async restart() {
      await ctl('-m', 'fast', 'restart');
    },
    async remove() {
      await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(directory, { recursive: true, force: true });
    },
  };
}

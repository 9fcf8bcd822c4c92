import { Worker } from 'node:worker_threads';

// Runs on a thread of its own, with a read-only connection of its own, so that a check of a large file
// (it reads every page) never holds the event loop. CommonJS, resolved from this package.
const threadCode = `
const { workerData, parentPort } = require('node:worker_threads');
const { createRequire } = require('node:module');
const Database = createRequire(workerData.from)('better-sqlite3');
let database;
try {
  database = new Database(workerData.path, { readonly: true, fileMustExist: true, timeout: 5000 });
  const rows = database.pragma('quick_check(20)');
  parentPort.postMessage({ problems: rows.map((row) => String(row.quick_check)).filter((text) => text !== 'ok') });
} catch (error) {
  parentPort.postMessage({ problems: [String(error && error.message)], code: error && error.code });
} finally {
  if (database !== undefined) database.close();
}
`;

/**
 * Checks every page of the SQLite file at `path` (`PRAGMA quick_check`: the b-trees, their records and
 * pages, not the index contents) on a worker thread with a read-only connection; resolves with the
 * problems found (at most 20, none for a sound file). A file that cannot be opened for the check yields
 * one problem saying why. It reads one snapshot: the WAL cannot be checkpointed past it until it ends.
 */
export function checkSqliteIntegrity(path: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(threadCode, { eval: true, workerData: { path, from: import.meta.url } });
    worker.once('message', (message: { problems: string[] }) => resolve(message.problems));
    worker.once('error', reject);
    worker.once('exit', (code) =>
      code === 0 ? undefined : reject(new Error(`the integrity check thread exited with ${code}`)),
    );
  });
}

import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRunning, makeWorkDirectory } from './run-mnemo.js';

const repository = fileURLToPath(new URL('../../..', import.meta.url));
let work: Awaited<ReturnType<typeof makeWorkDirectory>>;

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  await work.remove();
});

/**
 * What a script does: start `npx mnemo serve` in the background, wait for its line, then `kill -INT $!`
 * (the PID of npx, not of node). It runs from the clone's folder, with its logs in the test's own. The
 * script prints the pids it saw and the milliseconds until the port stopped answering (polling every
 * 20 ms, at most 3 s).
 */
const script = (db: string, logs: string) => `
set -u
cd ${JSON.stringify(repository)}
npx mnemo serve --port 0 --db ${JSON.stringify(db)} --workers 1 > ${JSON.stringify(logs)}/out.txt 2> ${JSON.stringify(logs)}/err.txt &
NPX=$!
for i in $(seq 150); do grep -q listening ${JSON.stringify(logs)}/out.txt 2>/dev/null && break; sleep 0.1; done
URL=$(head -1 ${JSON.stringify(logs)}/out.txt | sed 's/^mnemo listening on //')
for i in $(seq 100); do [ "$(pgrep -f -- "worker --db ${db}" | wc -l)" -gt 0 ] && break; sleep 0.1; done
echo "url $URL"
echo "health $(curl -s "$URL/health")"
echo "pids $(pgrep -f -- "--db ${db}" | tr '\\n' ' ')"
START=$(date +%s%N)
kill -INT $NPX
while curl -s -m 0.2 "$URL/health" > /dev/null; do
  [ $(( ($(date +%s%N) - START) / 1000000 )) -gt 3000 ] && break
  sleep 0.02
done
echo "closed_ms $(( ($(date +%s%N) - START) / 1000000 ))"
wait $NPX
echo "npx_exit $?"
`;

describe.skipIf(process.platform !== 'linux')('mnemo serve started through npx', () => {
  it("stops, workers included, when a script interrupts npx's PID (kill -INT $!), freeing the port within a second", async () => {
    const db = join(work.path, 'bot.db');
    await writeFile(join(work.path, 'stop.sh'), script(db, work.path));
    const child = spawn('bash', ['stop.sh'], {
      cwd: work.path,
      env: { PATH: process.env.PATH ?? '', HOME: work.path },
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await new Promise((resolve) => child.once('close', resolve));

    const field = (name: string) => new RegExp(`^${name} (.*)$`, 'm').exec(output)?.[1] ?? '';
    expect(field('health'), output).toContain('"status":"ok"');
    const pids = field('pids').trim().split(' ').map(Number);
    // npm, its sh, the node serving HTTP and the worker.
    expect(pids.length, output).toBeGreaterThanOrEqual(3);
    expect(Number(field('closed_ms')), output).toBeLessThan(1000);
    expect(field('npx_exit')).toBe('130');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(pids.filter(isRunning), 'processes left running').toEqual([]);
  }, 60_000);
});

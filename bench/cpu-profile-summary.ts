// tsx bench/cpu-profile-summary.ts FILE.cpuprofile [--top 25] [--inclusive name1,name2]: the top
// self-time functions of a V8 CPU profile (node --cpu-prof, or bench:serve --cpu-prof DIR), the share
// of idle and GC time, and the inclusive time of named functions. Prints a table.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, inclusive: { type: 'string' } },
});

for (const file of positionals) {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const selfMicros = new Map<number, number>();
  let totalMicros = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    totalMicros += delta;
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta);
  });
  const label = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url === '' ? '' : ` ${shortUrl(url)}:${lineNumber + 1}`;
    return `${functionName === '' ? '(anonymous)' : functionName}${where}`;
  };
  const selfByLabel = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    const key = label(byId.get(id)!);
    selfByLabel.set(key, (selfByLabel.get(key) ?? 0) + micros);
  }
  const percent = (micros: number) => `${((micros / totalMicros) * 100).toFixed(1)} %`;
  const special = (name: string) =>
    [...selfByLabel].filter(([key]) => key.startsWith(name)).reduce((sum, [, micros]) => sum + micros, 0);
  process.stdout.write(
    `${file}: ${(totalMicros / 1e6).toFixed(1)} s sampled; idle ${percent(special('(idle)'))}, GC ${percent(special('(garbage collector)'))}, program ${percent(special('(program)'))}\n`,
  );
  process.stdout.write('self %   function\n');
  const top = [...selfByLabel].sort((left, right) => right[1] - left[1]).slice(0, Number(values.top));
  for (const [key, micros] of top) process.stdout.write(`${percent(micros).padStart(7)}  ${key}\n`);
  if (values.inclusive !== undefined) {
    process.stdout.write('inclusive %   function\n');
    for (const name of values.inclusive.split(',')) {
      let micros = 0;
      for (const [id, self] of selfMicros) {
        // A sample counts once for `name` if any of its stack frames is that function.
        for (let current: number | undefined = id; current !== undefined; current = parentOf.get(current)) {
          if (byId.get(current)!.callFrame.functionName === name) {
            micros += self;
            break;
          }
        }
      }
      process.stdout.write(`${percent(micros).padStart(11)}  ${name}\n`);
    }
  }
}

function shortUrl(url: string): string {
  const packages = url.lastIndexOf('/packages/');
  if (packages !== -1) return url.slice(packages + 1);
  const modules = url.lastIndexOf('/node_modules/');
  return modules === -1 ? url.replace(/^file:\/\//, '') : url.slice(modules + '/node_modules/'.length);
}

import type { Reporter, TestModule } from 'vitest/node';
import type { ReliabilityFigures } from './reliability-figures.js';

/**
 * A vitest reporter beside the default one: once the run ends, prints one table of every figure the
 * reliability suite recorded (see `recordFigures`) to stderr, then the same as one JSON line, so that
 * every CI log shows them whether the tests passed or not. Prints nothing when no reliability test ran.
 */
export default class ReliabilityReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const sections: ReliabilityFigures[] = [];
    for (const testModule of testModules) {
      for (const testCase of testModule.children.allTests()) {
        const state = testCase.result().state;
        for (const entry of testCase.meta().reliability ?? [])
          sections.push({
            section: `${entry.section}${state === 'passed' ? '' : ` [${state}]`}`,
            figures: entry.figures,
          });
      }
    }
    if (sections.length === 0) return;
    sections.sort((a, b) => a.section.localeCompare(b.section));
    process.stderr.write(`\n${formatReliabilityTable(sections)}\n`);
    const json = Object.fromEntries(sections.map((entry) => [entry.section, Object.fromEntries(entry.figures)]));
    process.stderr.write(`reliability figures (json): ${JSON.stringify(json)}\n\n`);
  }
}

/** The figures as a plain-text table: section, figure, value (numbers right-aligned with thousands separators). */
export function formatReliabilityTable(sections: readonly ReliabilityFigures[]): string {
  const rows = sections.flatMap((entry) =>
    entry.figures.map(([name, value], index) => [
      index === 0 ? entry.section : '',
      name,
      typeof value === 'number' ? value.toLocaleString('en-US') : value,
    ]),
  );
  const header = ['reliability suite', 'figure', 'value'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === 2 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

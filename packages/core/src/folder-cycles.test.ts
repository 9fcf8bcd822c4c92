import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const sourceRoot = dirname(fileURLToPath(import.meta.url));

/** Relative runtime imports (`import type` and `export type` erase at build and are left out) of a source file. */
function runtimeImports(source: string): string[] {
  const specifiers: string[] = [];
  const pattern = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const match of source.matchAll(pattern)) specifiers.push(match[1]!);
  return specifiers;
}

/** Concept folder → the concept folders its non-test files import at run time. */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const entry of readdirSync(sourceRoot, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const folder = relative(sourceRoot, entry.parentPath).split(sep)[0] ?? '';
    if (folder === '') continue;
    const edges = graph.get(folder) ?? new Set<string>();
    graph.set(folder, edges);
    for (const specifier of runtimeImports(readFileSync(file, 'utf8'))) {
      const target = relative(sourceRoot, resolve(entry.parentPath, specifier)).split(sep)[0] ?? '';
      if (target !== folder && !target.endsWith('.js')) edges.add(target);
    }
  }
  return graph;
}

/** Every cycle of the graph, each as the path that closes it (depth-first, each start folder once). */
function findCycles(graph: Map<string, Set<string>>): string[][] {
  const cycles: string[][] = [];
  const visit = (folder: string, path: string[]): void => {
    for (const next of graph.get(folder) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) cycles.push([...path.slice(at), next]);
      else visit(next, [...path, next]);
    }
  };
  for (const folder of graph.keys()) visit(folder, [folder]);
  return cycles;
}

describe('core concept folders', () => {
  it('import each other at run time without a cycle', () => {
    const graph = folderGraph();
    expect(graph.get('knowledge')).toEqual(new Set(['errors', 'facts', 'graph']));
    expect(findCycles(graph)).toEqual([]);
  });

  it('finds a cycle when one folder imports another that imports it back', () => {
    const graph = new Map([
      ['facts', new Set(['graph'])],
      ['graph', new Set(['facts'])],
    ]);
    expect(findCycles(graph)).toContainEqual(['facts', 'graph', 'facts']);
  });
});

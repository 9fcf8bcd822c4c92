import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Every entry of every package's `exports` map (what `import … from '@mnemo/x/y'` can reach), with the
// names it exports at run time and as types, compared against public-exports.json. A name added to or
// taken from any entry fails this test until the snapshot is updated (`npx vitest run -u`), so that the
// public surface grows only as a reviewed change. Read from the built declarations (`npm test` builds first).

const packagesRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface EntryNames {
  readonly runtime: string[];
  readonly types: string[];
}

function declarationEntries(): Map<string, string> {
  const entries = new Map<string, string>();
  for (const folder of readdirSync(packagesRoot).sort()) {
    const manifestPath = join(packagesRoot, folder, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      name: string;
      exports?: Record<string, string | { types?: string }>;
    };
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (typeof target === 'string' || target.types === undefined) continue;
      entries.set(
        subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
        join(packagesRoot, folder, target.types),
      );
    }
  }
  return entries;
}

function exportedNames(entries: Map<string, string>): Record<string, EntryNames> {
  const program = ts.createProgram([...entries.values()], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const names: Record<string, EntryNames> = {};
  for (const [entry, file] of entries) {
    const source = program.getSourceFile(file);
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (module === undefined) throw new Error(`${entry}: no declarations at ${file} (run npm run build)`);
    const runtime: string[] = [];
    const types: string[] = [];
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      (target.flags & ts.SymbolFlags.Value ? runtime : types).push(symbol.name);
    }
    names[entry] = { runtime: runtime.sort(), types: types.sort() };
  }
  return names;
}

describe('public exports', () => {
  it('every package entry exports exactly the names in public-exports.json', async () => {
    const names = exportedNames(declarationEntries());
    expect(Object.keys(names)).toContain('@mnemo/core');
    expect(names['@mnemo/core']!.runtime).toContain('createMemory');
    await expect(`${JSON.stringify(names, null, 2)}\n`).toMatchFileSnapshot('./public-exports.json');
  });
});

import { readFileSync } from 'node:fs';

/** The `version` of the `mnemo` package.json (one directory above `dist/` and `src/`). */
export function readCliVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version?: unknown;
  };
  return typeof manifest.version === 'string' ? manifest.version : '0.0.0';
}

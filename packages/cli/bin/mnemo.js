#!/usr/bin/env node
// The `mnemo` command. This file is committed (not built) so that npm can link it on the very first
// `npm install` of a fresh clone: npm links workspace bins before the root `prepare` script has built
// dist/, and skips a link whose target does not exist yet. It only loads the built entry point.
const entry = new URL('../dist/main.js', import.meta.url);
try {
  await import(entry.href);
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes(entry.pathname)) {
    process.stderr.write(
      `mnemo is not built yet (${entry.pathname} is missing): run \`npm install\` or \`npm run build\` in the repository first\n`,
    );
    process.exit(2);
  }
  throw error;
}

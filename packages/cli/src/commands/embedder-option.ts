import { Option } from 'commander';
import type { CliIo } from '../cli-io.js';
import { embedderKinds } from '../config/cli-config.js';

/** The `--embedder <kind>` option (over `MNEMO_EMBEDDER` and the config file) of a command that embeds. */
export function embedderOption(): Option {
  return new Option(
    '--embedder <kind>',
    'embedder for vector recall: static (default, microseconds a text), use-lite (the bundled USE-lite model), openai, hashed, none (MNEMO_EMBEDDER)',
  ).choices(embedderKinds);
}

/**
 * The command's io with `--embedder` in force as `MNEMO_EMBEDDER`, so the config reads it and the
 * processes the command starts (HTTP processes, workers) inherit it.
 */
export function withEmbedderFlag(io: CliIo, flags: { readonly embedder?: string }): CliIo {
  return flags.embedder === undefined ? io : { ...io, env: { ...io.env, MNEMO_EMBEDDER: flags.embedder } };
}

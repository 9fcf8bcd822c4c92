// Lint configuration (decision 0036): typescript-eslint's type-checked recommended rules over every
// package, bench/ and examples/. Each rule tuned here says why on the line above it.
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier/flat';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    // Built output, installs, run outputs and benchmark results are not source.
    ignores: ['**/dist/**', '**/node_modules/**', 'artifacts/**', '**/coverage/**', 'bench/results/**'],
  },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        // Each file is typed by the nearest tsconfig.json that includes it; tests, fixtures and scripts
        // (which no package build includes) by the root tsconfig.json.
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Ports return promises; sync implementations (in-memory stores, offline embedders and
      // summarizers, fakes) are `async` on purpose so that a throw reaches the caller as a rejection.
      '@typescript-eslint/require-await': 'off',
      // A leading underscore marks a binding kept on purpose: a field omitted by rest destructuring,
      // a callback parameter that fixes the position of the next one.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
        },
      ],
    },
  },
  // Last, so that no stylistic rule fights the formatter.
  prettier,
);

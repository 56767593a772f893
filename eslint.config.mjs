// @ts-check
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    // Plain CommonJS that Node loads untransformed: the config files, Jest's global setup.
    ignores: [
      '**/dist/',
      'node_modules/',
      '.local/',
      'coverage/',
      '*.config.{js,mjs}',
      'test/helpers/global-*.js',
    ],
  },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // Config classes annotate types so decorator metadata can convert environment strings.
      '@typescript-eslint/no-inferrable-types': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@app/*/*'], message: 'Import a lib only through its index, as @app/<lib>.' },
          ],
        },
      ],
    },
  },
  {
    // Test handlers are often async for the signature's sake, and tests read answers' JSON
    // freely: a wrong guess fails the test anyway.
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Only libs/kafka talks to the Kafka client.
    files: ['apps/**/*.ts', 'libs/!(kafka)/**/*.ts', 'test/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'kafkajs',
              message: 'Use @app/kafka; it is the only code that imports kafkajs.',
            },
          ],
          patterns: [
            { group: ['@app/*/*'], message: 'Import a lib only through its index, as @app/<lib>.' },
          ],
        },
      ],
    },
  },
  {
    // The operator console's browser module: plain JS served as written, no type information.
    files: ['apps/admin/src/console/static/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['apps/admin/src/console/static/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        ['document', 'window', 'location', 'history', 'sessionStorage', 'fetch']
          .concat(['URLSearchParams', 'Node', 'setTimeout', 'clearTimeout'])
          .map((name) => [name, 'readonly']),
      ),
    },
  },
);

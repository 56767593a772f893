// @ts-check
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/** Every file: a lib only through its index. */
const LIB_INDEX_ONLY = {
  group: ['@app/*/*'],
  message: 'Import a lib only through its index, as @app/<lib>.',
};

/** Outside libs/kafka: nothing of it but its face, nothing of kafkajs's own modules. */
const KAFKA_FACE_ONLY = [
  { group: ['**/libs/kafka/**'], message: 'Use libs/kafka only through @app/kafka.' },
  {
    group: ['kafkajs/*'],
    message: "Only libs/kafka/src/internals/ touches kafkajs's own modules.",
  },
];

/** Inside libs/kafka: its index is the face, which imports the layers, not the reverse. */
const FACE = {
  regex: '^\\.\\.(/index)?$',
  message: 'The face imports the layers, not the reverse.',
};

/** `require('kafkajs/src/…')`, which no-restricted-imports does not see. */
const KAFKAJS_INTERNALS_REQUIRE = {
  selector: "CallExpression[callee.name='require'][arguments.0.value=/^kafkajs.src./]",
  message: "Only libs/kafka/src/internals/ touches kafkajs's own modules (kafkajs/src/**).",
};

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
      'no-restricted-imports': ['error', { patterns: [LIB_INDEX_ONLY] }],
      'no-restricted-syntax': ['error', KAFKAJS_INTERNALS_REQUIRE],
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
    // Only libs/kafka talks to the Kafka client, and the others use it through its face.
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
          patterns: [LIB_INDEX_ONLY, ...KAFKA_FACE_ONLY],
        },
      ],
    },
  },
  {
    // The benchmarks measure kafkajs as it is too, but libs/kafka only through its face.
    files: ['bench/**/*.{ts,mts}'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [LIB_INDEX_ONLY, ...KAFKA_FACE_ONLY] }],
    },
  },
  {
    // libs/kafka's consumer semantics: plain TypeScript, unit-tested without a broker.
    files: ['libs/kafka/src/semantics/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'kafkajs', message: 'semantics/ knows nothing of kafkajs.' }],
          patterns: [
            LIB_INDEX_ONLY,
            { group: ['kafkajs/*'], message: 'semantics/ knows nothing of kafkajs.' },
            { group: ['@nestjs/*'], message: 'semantics/ knows nothing of Nest.' },
            {
              group: ['../client/*', '../internals/*'],
              message: 'semantics/ is the inner layer: it imports nothing of libs/kafka beside it.',
            },
            FACE,
          ],
        },
      ],
    },
  },
  {
    // libs/kafka's transport, producer, readers and module: kafkajs's public API only.
    files: ['libs/kafka/src/client/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            LIB_INDEX_ONLY,
            {
              group: ['kafkajs/*'],
              message: "client/ uses kafkajs's public API; its own modules are internals/'s.",
            },
            FACE,
          ],
        },
      ],
    },
  },
  {
    // libs/kafka's internals: the one place that reaches into kafkajs/src/**.
    files: ['libs/kafka/src/internals/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            LIB_INDEX_ONLY,
            {
              group: ['../client/*', '../semantics/*'],
              message: 'internals/ knows nothing of the layers built on it.',
            },
            FACE,
          ],
        },
      ],
      'no-restricted-syntax': 'off',
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

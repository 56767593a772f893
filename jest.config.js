// @ts-check
/** @type {import('jest').Config['transform']} */
const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    {
      swcrc: false,
      sourceMaps: 'inline',
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: {
          legacyDecorator: true,
          decoratorMetadata: true,
          useDefineForClassFields: false,
        },
        target: 'es2023',
        keepClassNames: true,
      },
      module: { type: 'commonjs' },
    },
  ],
};

/** @type {import('jest').Config} */
const shared = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform,
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: { '^@app/(.*)$': '<rootDir>/libs/$1/src' },
};

/**
 * Four projects: unit specs beside the code (no services), medium tests of the rules that live
 * in SQL against a real PostgreSQL (no Kafka), integration tests against the real Kafka and
 * PostgreSQL, and e2e tests that boot the apps. `npm test` runs them all.
 * @type {import('jest').Config}
 */
module.exports = {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts'] },
    {
      ...shared,
      displayName: 'medium',
      testMatch: ['<rootDir>/test/medium/**/*.spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/helpers/jest-setup.ts'],
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/helpers/jest-setup.ts'],
    },
    {
      ...shared,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/helpers/jest-setup.ts'],
    },
  ],
  maxWorkers: 2,
  globalSetup: '<rootDir>/test/helpers/global-setup.js',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.js',
};

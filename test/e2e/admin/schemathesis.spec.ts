import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { AdminHarness } from '../../helpers/admin-harness';
import { TEST_ADMIN_TOKEN } from '../../helpers/services';

/** The repository's git-ignored tools folder; schemathesis keeps its cache under its cwd. */
const LOCAL = join(__dirname, '../../../.local');
/** Installed by docker/local/tools.sh (`npm test` runs it first), pinned there. */
const SCHEMATHESIS = join(LOCAL, 'schemathesis/bin/schemathesis');

/** The checks the admin API must pass: no 500, answers as documented, statuses documented. */
const CHECKS = 'not_a_server_error,response_schema_conformance,status_code_conformance';

interface Run {
  readonly code: number | null;
  readonly output: string;
}

/** Runs schemathesis with `phases` for at most `maxTimeSeconds` against the harness's API. */
function schemathesis(h: AdminHarness, phases: string, maxTimeSeconds: number): Promise<Run> {
  const args = [
    'run',
    `${h.url}/admin/v1/openapi.json`,
    '--url',
    h.url,
    '--header',
    `Authorization: Bearer ${TEST_ADMIN_TOKEN}`,
    '--phases',
    phases,
    '--checks',
    CHECKS,
    '--max-time',
    String(maxTimeSeconds),
    '--workers',
    '2',
    '--seed',
    '31',
    '--no-color',
  ];
  return new Promise((resolve) => {
    execFile(
      SCHEMATHESIS,
      args,
      { cwd: LOCAL, timeout: (maxTimeSeconds + 60) * 1000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, output: `${stdout}\n${stderr}` });
      },
    );
  });
}

describe('admin API under schemathesis (its OpenAPI document against its answers)', () => {
  const h = new AdminHarness();

  beforeAll(() => h.start());
  afterAll(() => h.close());

  it('finds the tool installed by the test command', () => {
    expect(existsSync(SCHEMATHESIS)).toBe(true);
  });

  it.each([
    ['stateless (examples, coverage, fuzzing)', 'examples,coverage,fuzzing', 45],
    ['stateful (sequences of calls linked by ids)', 'stateful', 30],
  ])(
    '%s: no server error, no answer outside its schema, no undocumented status',
    async (_name, phases, maxTimeSeconds) => {
      const run = await schemathesis(h, phases, maxTimeSeconds);
      // The whole report on failure: each finding with the request that reproduces it.
      expect({ code: run.code, output: run.code === 0 ? '' : run.output }).toEqual({
        code: 0,
        output: '',
      });
      expect(run.output).toMatch(/passed/i);
    },
    180_000,
  );
});

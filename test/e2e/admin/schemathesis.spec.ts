import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { AdminHarness } from '../../helpers/admin-harness';
import { TEST_ADMIN_TOKEN } from '../../helpers/services';

/** The repository's git-ignored tools folder; schemathesis keeps its cache under its cwd. */
const LOCAL = join(__dirname, '../../../.local');
/** Installed by docker/local/tools.sh (`npm test` runs it first), pinned there. */
const SCHEMATHESIS = join(LOCAL, 'schemathesis/bin/schemathesis');

/** The checks the admin API must pass: no 500, answers as documented, statuses documented. */
const CHECKS = 'not_a_server_error,response_schema_conformance,status_code_conformance';

/** The parts of the OpenAPI document the spec reads. */
interface OpenApi {
  readonly paths: Record<
    string,
    Record<
      string,
      {
        responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
      }
    >
  >;
  readonly components: {
    readonly securitySchemes: Record<string, unknown>;
    readonly schemas: Record<string, unknown>;
  };
}

interface Run {
  readonly code: number | null;
  readonly output: string;
}

/** Ids of things that exist, by the path parameter that names them. */
type Fixtures = Readonly<Record<string, readonly string[]>>;

/**
 * Makes a source with a destination (with a webhook), an audience with an open sync, a
 * computed trait and a deletion request, so that generated requests reach past the 404s.
 */
async function makeFixtures(h: AdminHarness): Promise<Fixtures> {
  const made = async (path: string, body?: unknown): Promise<string> => {
    const answer = await h.call('POST', path, body);
    expect(answer.status).toBe(201);
    return answer.body.id as string;
  };
  const source = await made('/admin/v1/sources', { name: 'fuzzed' });
  const S = `/admin/v1/sources/${source}`;
  const destination = await made(`${S}/destinations`, { name: 'hooks' });
  const webhook = await made(`${S}/destinations/${destination}/webhooks`, {
    url: 'https://example.com/hook',
  });
  const audience = await made(`${S}/audiences`, { name: 'Big spenders' });
  const trait = await made(`${S}/computed-traits`, { name: 'Lifetime value' });
  const syncs = [
    await made(`${S}/audiences/${audience}/syncs`),
    await made(`${S}/computed-traits/${trait}/syncs`),
  ];
  const request = await made('/admin/v1/deletion-requests', { userIds: ['u-1'] });
  return {
    sourceId: [source],
    destinationId: [destination],
    webhookId: [webhook],
    audienceId: [audience, trait],
    syncId: syncs,
    requestId: [request],
  };
}

/**
 * schemathesis's configuration: each path parameter takes an id of a thing that exists most
 * of the time, and a generated value otherwise (which must then answer 404 or 400). DELETEs
 * take the ids of a second set, so that they do not remove what the other requests use.
 */
function configToml(kept: Fixtures, doomed: Fixtures): string {
  // Strings may hold U+0000, which PostgreSQL cannot store: the API must refuse it with a 400.
  const lines: string[] = ['[generation]', 'allow-x00 = true', ''];
  const dictionaries = (prefix: string, fixtures: Fixtures): void => {
    for (const [name, ids] of Object.entries(fixtures)) {
      lines.push(`[dictionaries.${prefix}${name}]`, `values = ${JSON.stringify(ids)}`, '');
    }
  };
  const bindings = (prefix: string, fixtures: Fixtures): string[] =>
    Object.keys(fixtures).map(
      (name) => `"path.${name}" = { dictionary = "${prefix}${name}", probability = 0.8 }`,
    );
  dictionaries('', kept);
  dictionaries('doomed_', doomed);
  lines.push('[parameters]', ...bindings('', kept), '');
  lines.push('[[operations]]', 'include-method = "DELETE"', '[operations.parameters]');
  lines.push(...bindings('doomed_', doomed));
  return `${lines.join('\n')}\n`;
}

/** Runs schemathesis with `phases` for at most `maxTimeSeconds` against the harness's API. */
function schemathesis(
  h: AdminHarness,
  configFile: string,
  phases: string,
  maxTimeSeconds: number,
): Promise<Run> {
  const args = [
    '--config-file',
    configFile,
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
    // One worker: hypothesis's parsing in several threads trips a CPython 3.11 AST bug.
    '--workers',
    '1',
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
  const dir = mkdtempSync(join(tmpdir(), 'sluice-schemathesis-'));
  const configFile = join(dir, 'schemathesis.toml');

  beforeAll(async () => {
    await h.start();
    writeFileSync(configFile, configToml(await makeFixtures(h), await makeFixtures(h)));
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('documents every operation: its success with a schema, its errors as {code, message}, an opaque bearer token', async () => {
    const document = (await (await fetch(`${h.url}/admin/v1/openapi.json`)).json()) as OpenApi;
    expect(document.components.securitySchemes.bearer).toEqual({
      type: 'http',
      scheme: 'bearer',
      description: expect.stringContaining('opaque'),
    });
    expect(document.components.schemas.ErrorAnswer).toMatchObject({
      required: ['code', 'message'],
    });
    const gaps: string[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const where = `${method.toUpperCase()} ${path}`;
        const statuses = Object.keys(operation.responses);
        const ok = statuses.filter((status) => status.startsWith('2'));
        if (ok.length !== 1) gaps.push(`${where}: success answers ${ok.join(',')}`);
        if (!['401', '403'].every((status) => statuses.includes(status))) {
          gaps.push(`${where}: 401/403 missing`);
        }
        for (const status of statuses) {
          const schema = operation.responses[status].content?.['application/json']?.schema;
          const ref = JSON.stringify(schema ?? null);
          if (status.startsWith('2') && status !== '204' && !schema) {
            gaps.push(`${where} ${status}: no schema`);
          }
          if (!status.startsWith('2') && !ref.includes('#/components/schemas/ErrorAnswer')) {
            gaps.push(`${where} ${status}: not {code, message}`);
          }
        }
      }
    }
    expect(gaps).toEqual([]);
    const operations = Object.values(document.paths).flatMap((methods) => Object.keys(methods));
    expect(operations.length).toBeGreaterThanOrEqual(60);
    expect(Object.keys(document.paths).every((path) => path.startsWith('/admin/v1/'))).toBe(true);
  });

  it('finds the tool installed by the test command', () => {
    expect(existsSync(SCHEMATHESIS)).toBe(true);
  });

  it.each([
    ['stateless (examples, coverage, fuzzing)', 'examples,coverage,fuzzing', 45],
    ['stateful (sequences of calls linked by ids)', 'stateful', 30],
  ])(
    '%s: no server error, no answer outside its schema, no undocumented status',
    async (_name, phases, maxTimeSeconds) => {
      const run = await schemathesis(h, configFile, phases, maxTimeSeconds);
      // The whole report on failure: each finding with the request that reproduces it.
      // Generated bodies can be megabytes long: each line of the report is cut short.
      const report = run.output.replace(/[^\n]{2000,}/g, (line) => `${line.slice(0, 2000)} …`);
      expect({ code: run.code, output: run.code === 0 ? '' : report }).toEqual({
        code: 0,
        output: '',
      });
      expect(run.output).toMatch(/passed/i);
    },
    180_000,
  );
});

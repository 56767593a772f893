import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

import {
  EnvVariable,
  expectedFiles,
  readEnvVariables,
  renderEnvExample,
  renderMarkdown,
} from './config-docs';

const ROOT = join(__dirname, '..', '..', '..');

describe('npm run config:docs', () => {
  it('has written docs/configuration.md and .env.example as the env classes say', () => {
    const stale = [...expectedFiles(ROOT)]
      .filter(([path, expected]) => read(path) !== expected)
      .map(
        ([path, expected]) =>
          `${path} is not what the env classes give (${firstDifference(read(path), expected)}): run \`npm run config:docs\``,
      );
    expect(stale).toEqual([]);
  });
});

describe(readEnvVariables.name, () => {
  const base = `
    import { IsIn, IsInt, Matches, Max, Min } from 'class-validator';
    export const LEVELS = ['low', 'high'] as const;
    export class Base {
      /**
       * Where the broker is.
       * @example 127.0.0.1:9092
       */
      @Matches(/./)
      BROKERS!: string;

      /** How loud. */
      @IsIn(LEVELS)
      LEVEL: string = 'low';
    }
    export class Shared extends Base {
      /** A key two apps share. */
      @Matches(/./)
      KEY!: string;
    }`;
  const app = (name: string, parent: string, own: string): string => `
    import { IsInt, Max, Min } from 'class-validator';
    import { ${parent}, readEnv } from '../../base';
    const HOUR_SECONDS = 3600;
    class ${name}Env extends ${parent} {
      ${own}
    }
    export const load = () => readEnv(${name}Env, {});`;
  const files = {
    '/v/base.ts': `${base}\nexport function readEnv(c: unknown, e: unknown): unknown { return [c, e]; }`,
    '/v/apps/one/config.ts': app(
      'One',
      'Shared',
      `/** How long, in seconds. */ @IsInt() @Min(1) @Max(7 * 24 * HOUR_SECONDS) WINDOW_SECONDS: number = 4 * HOUR_SECONDS;`,
    ),
    '/v/apps/two/config.ts': app('Two', 'Shared', `/** Its port. */ @IsInt() TWO_PORT = 80;`),
    '/v/apps/three/config.ts': app('Three', 'Base', `/** Its port. */ @IsInt() THREE_PORT = 81;`),
  };
  const sources = ['one', 'two', 'three'].map((a) => ({
    app: a,
    fileName: `/v/apps/${a}/config.ts`,
  }));

  it('reads names, texts, defaults, examples and rules, inherited ones too', () => {
    const variables = readEnvVariables(programOf(files), sources);
    expect(variables.map((v) => [v.name, v.apps.join(',')])).toEqual([
      ['BROKERS', 'one,three,two'],
      ['LEVEL', 'one,three,two'],
      ['WINDOW_SECONDS', 'one'],
      ['KEY', 'one,two'],
      ['THREE_PORT', 'three'],
      ['TWO_PORT', 'two'],
    ]);
    const byName = new Map(variables.map((v) => [v.name, v]));
    expect(byName.get('BROKERS')).toMatchObject({
      description: 'Where the broker is.',
      defaultValue: undefined,
      example: '127.0.0.1:9092',
    });
    expect(byName.get('LEVEL')).toMatchObject({ defaultValue: 'low', choices: ['low', 'high'] });
    expect(byName.get('WINDOW_SECONDS')).toMatchObject({
      defaultValue: '14400',
      min: 1,
      max: 604800,
    });
  });

  it('refuses one name declared twice with different texts', () => {
    const twice = {
      ...files,
      '/v/apps/two/config.ts': app(
        'Two',
        'Shared',
        `/** Other text. */ @IsInt() WINDOW_SECONDS = 1;`,
      ),
    };
    expect(() => readEnvVariables(programOf(twice), sources)).toThrow(
      /WINDOW_SECONDS is declared twice/,
    );
  });

  it('refuses a variable without a description', () => {
    const bare = {
      ...files,
      '/v/apps/two/config.ts': app('Two', 'Shared', `@IsInt() TWO_PORT = 80;`),
    };
    expect(() => readEnvVariables(programOf(bare), sources)).toThrow(/TWO_PORT .* has no JSDoc/);
  });
});

describe(renderEnvExample.name, () => {
  it('gives each variable one comment line and a value for local use', () => {
    const text = renderEnvExample(
      [VARIABLE, { ...VARIABLE, name: 'B', defaultValue: '5', example: undefined }],
      ['x'],
    );
    expect(text.split('\n').slice(-6)).toEqual([
      '# --- every app ---',
      '# A broker, host:port. Required.',
      'A=127.0.0.1:9092',
      '# A broker, host:port.',
      'B=5',
      '',
    ]);
  });
});

describe(renderMarkdown.name, () => {
  it('puts the table where the template says', () => {
    const text = renderMarkdown(
      [{ ...VARIABLE, description: 'a | b' }],
      '# T\n\n<!-- variables -->\n',
      ['x', 'y'],
    );
    expect(text).toContain('| `A` | x | (required) | a \\| b Example: `127.0.0.1:9092`. |');
  });
});

const VARIABLE: EnvVariable = {
  name: 'A',
  apps: ['x'],
  description: 'A broker, `host:port`.',
  defaultValue: undefined,
  example: '127.0.0.1:9092',
  choices: undefined,
  min: undefined,
  max: undefined,
};

function read(path: string): string | undefined {
  const file = join(ROOT, path);
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

function firstDifference(actual: string | undefined, expected: string): string {
  if (actual === undefined) return 'missing';
  const a = actual.split('\n');
  const e = expected.split('\n');
  const line = e.findIndex((text, i) => a[i] !== text);
  const at = line < 0 ? e.length : line;
  // Table rows are padded to the widest cell: runs of spaces say nothing.
  const show = (text: string | undefined): string =>
    JSON.stringify((text ?? '').replace(/ +/g, ' '));
  return `line ${at + 1}: has ${show(a[at])}, should have ${show(e[at])}`;
}

/** A program over in-memory files; only symbols are resolved, so no library is needed. */
function programOf(files: Record<string, string>): ts.Program {
  const options: ts.CompilerOptions = { experimentalDecorators: true, noLib: true, types: [] };
  const host = ts.createCompilerHost(options);
  const has = (name: string): boolean => Object.hasOwn(files, name);
  host.fileExists = (name) => has(name);
  host.directoryExists = (dir) => Object.keys(files).some((name) => name.startsWith(`${dir}/`));
  host.readFile = (name) => (has(name) ? files[name] : undefined);
  host.getSourceFile = (name, language) =>
    has(name) ? ts.createSourceFile(name, files[name], language, true) : undefined;
  return ts.createProgram(Object.keys(files), options, host);
}

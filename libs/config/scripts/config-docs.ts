/**
 * Writes `docs/configuration.md` and `.env.example` from the env classes: each app's
 * `apps/<app>/src/config.ts` (the class it passes to `readEnv`) and the `libs/config` classes it
 * extends. A variable's name, default, rules and apps come from its declaration, its text from
 * its JSDoc (`@example` gives `.env.example` a value where there is no default), and the prose
 * around the table from `configuration.template.md` beside this file.
 *
 * `npm run config:docs` runs `main()` under Node's TypeScript type stripping, so this file
 * uses only erasable syntax and imports nothing relative; its spec checks both files are fresh.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** The generated files, relative to the repository root. */
export const MARKDOWN_PATH = 'docs/configuration.md';
export const ENV_EXAMPLE_PATH = '.env.example';
const TEMPLATE_PATH = 'libs/config/scripts/configuration.template.md';
/** The line of the template that the table replaces. */
const TABLE_MARKER = '<!-- variables -->';
/** Apps in the order calls flow through them; others follow by name. */
const APP_ORDER = ['ingest', 'admin', 'router', 'dispatcher'];

type Value = string | number | boolean | readonly Value[];

/** One environment variable, as its env classes declare it. */
export interface EnvVariable {
  readonly name: string;
  /** Apps whose env class has it, in `APP_ORDER`. */
  readonly apps: readonly string[];
  /** Its JSDoc text on one line. */
  readonly description: string;
  /** The default as the environment would spell it; undefined when required. */
  readonly defaultValue: string | undefined;
  /** From `@example`: a value for `.env.example` and the docs where there is no default. */
  readonly example: string | undefined;
  /** From `@IsIn(...)`. */
  readonly choices: readonly string[] | undefined;
  /** From `@Min(...)` and `@Max(...)`. */
  readonly min: number | undefined;
  readonly max: number | undefined;
}

/** One app's env class: the app's name and the file that declares the class. */
export interface EnvSource {
  readonly app: string;
  readonly fileName: string;
}

/** Every `apps/<app>/src/config.ts`, by app name. */
export function findEnvSources(root: string): EnvSource[] {
  return readdirSync(join(root, 'apps'))
    .map((app) => ({ app, fileName: join(root, 'apps', app, 'src', 'config.ts') }))
    .filter((source) => existsSync(source.fileName));
}

/** A program over the config files with the repository's compiler options (for `@app/*`). */
export function createConfigProgram(root: string, fileNames: readonly string[]): ts.Program {
  const configPath = join(root, 'tsconfig.json');
  const parsed = ts.parseJsonConfigFileContent(
    ts.readConfigFile(configPath, (path) => ts.sys.readFile(path)).config as unknown,
    ts.sys,
    root,
  );
  // Only symbols are resolved, nothing is checked: no ambient types are needed.
  return ts.createProgram(fileNames, { ...parsed.options, types: [], noEmit: true });
}

/**
 * The variables of every source's env class, inherited ones included, grouped as the docs
 * list them: those of every app first, then by app.
 * @throws Error when a class cannot be found or read, or when two declarations of one name
 * disagree.
 */
export function readEnvVariables(
  program: ts.Program,
  sources: readonly EnvSource[],
): EnvVariable[] {
  const checker = program.getTypeChecker();
  const apps = orderApps(sources.map((source) => source.app));
  const byName = new Map<string, { variable: Omit<EnvVariable, 'apps'>; apps: Set<string> }>();
  for (const app of apps) {
    const source = sources.find((s) => s.app === app)!;
    for (const property of envProperties(program, checker, source)) {
      const variable = describeProperty(checker, property);
      const known = byName.get(variable.name);
      if (!known) byName.set(variable.name, { variable, apps: new Set([app]) });
      else if (JSON.stringify(known.variable) !== JSON.stringify(variable)) {
        throw new Error(
          `${variable.name} is declared twice with different texts, defaults or rules: declare it once, in a libs/config class both env classes extend`,
        );
      } else known.apps.add(app);
    }
  }
  const variables = [...byName.values()].map(({ variable, apps: used }) => ({
    ...variable,
    apps: apps.filter((app) => used.has(app)),
  }));
  return groupVariables(variables, apps);
}

/** `docs/configuration.md` before Prettier: the template with the table in place. */
export function renderMarkdown(
  variables: readonly EnvVariable[],
  template: string,
  allApps: readonly string[],
): string {
  if (!template.includes(TABLE_MARKER)) throw new Error(`${TEMPLATE_PATH} lacks ${TABLE_MARKER}`);
  const rows = variables.map((v) =>
    [`\`${v.name}\``, appsLabel(v.apps, allApps), markdownDefault(v), markdownDescription(v)].map(
      (cell) => cell.replace(/\|/g, '\\|'),
    ),
  );
  const table = [
    '| variable | apps | default | description |',
    '| --- | --- | --- | --- |',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
  ].join('\n');
  const notice = `<!-- Generated by \`npm run config:docs\` from the env classes' JSDoc and ${TEMPLATE_PATH}: edit those, not this file. -->`;
  return `${notice}\n\n${template.replace(TABLE_MARKER, table)}`;
}

function markdownDefault(v: EnvVariable): string {
  if (v.defaultValue === undefined) return '(required)';
  return v.defaultValue === '' ? '(empty)' : `\`${v.defaultValue}\``;
}

function markdownDescription(v: EnvVariable): string {
  const example = v.example === undefined ? [] : [`Example: \`${v.example}\`.`];
  return [v.description, ...rules(v, '`'), ...example].join(' ');
}

/** `.env.example`: every variable with one comment line, grouped by the apps that read it. */
export function renderEnvExample(
  variables: readonly EnvVariable[],
  allApps: readonly string[],
): string {
  const lines = [
    '# Sluice configuration: every variable the apps read, set to its default or, where there is',
    '# none, to a value for local use (`npm start` and `npm test` start a local Kafka and',
    '# PostgreSQL when KAFKA_BROKERS and DATABASE_URL are unset). An empty value counts as unset.',
    `# Generated by \`npm run config:docs\` from the env classes; ${MARKDOWN_PATH} explains more.`,
  ];
  let group = '';
  for (const v of variables) {
    const label = appsLabel(v.apps, allApps);
    if (label !== group) lines.push('', `# --- ${label} ---`);
    group = label;
    const text = [
      v.description,
      ...rules(v, ''),
      ...(v.defaultValue === undefined ? ['Required.'] : []),
    ];
    lines.push(
      `# ${text.join(' ').replace(/`/g, '')}`,
      `${v.name}=${envText(v.example ?? v.defaultValue ?? '')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The generated files as they should be, by path relative to `root`. */
export function expectedFiles(root: string): Map<string, string> {
  const sources = findEnvSources(root);
  const program = createConfigProgram(
    root,
    sources.map((source) => source.fileName),
  );
  const variables = readEnvVariables(program, sources);
  const apps = orderApps(sources.map((source) => source.app));
  const template = readFileSync(join(root, TEMPLATE_PATH), 'utf8');
  const markdown = prettier(root, MARKDOWN_PATH, renderMarkdown(variables, template, apps));
  return new Map([
    [MARKDOWN_PATH, markdown],
    [ENV_EXAMPLE_PATH, renderEnvExample(variables, apps)],
  ]);
}

/** `npm run config:docs`: writes both files. */
export function main(root: string = process.cwd()): void {
  for (const [path, content] of expectedFiles(root)) {
    writeFileSync(join(root, path), content);
    process.stdout.write(`wrote ${path}\n`);
  }
}

/** The decorated properties of the class `config.ts` passes to `readEnv`, base classes first. */
function envProperties(
  program: ts.Program,
  checker: ts.TypeChecker,
  source: EnvSource,
): ts.PropertyDeclaration[] {
  const file = program.getSourceFile(source.fileName);
  if (!file) throw new Error(`${source.fileName} is not in the program`);
  const envClass = classPassedToReadEnv(checker, file);
  if (!envClass) throw new Error(`${source.fileName} passes no env class to readEnv`);
  const chain: ts.ClassDeclaration[] = [];
  for (let c: ts.ClassDeclaration | undefined = envClass; c; c = baseClass(checker, c)) {
    chain.unshift(c);
  }
  // readEnv reads only the properties class-validator knows, that is decorated ones.
  return chain.flatMap((c) =>
    c.members.filter(
      (m): m is ts.PropertyDeclaration =>
        ts.isPropertyDeclaration(m) && (ts.getDecorators(m)?.length ?? 0) > 0,
    ),
  );
}

function classPassedToReadEnv(
  checker: ts.TypeChecker,
  file: ts.SourceFile,
): ts.ClassDeclaration | undefined {
  let found: ts.ClassDeclaration | undefined;
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'readEnv' &&
      node.arguments.length > 0
    ) {
      found ??= declarationOf(checker, node.arguments[0], ts.isClassDeclaration);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function baseClass(
  checker: ts.TypeChecker,
  c: ts.ClassDeclaration,
): ts.ClassDeclaration | undefined {
  const extendsClause = c.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword);
  const expression = extendsClause?.types[0]?.expression;
  return expression && declarationOf(checker, expression, ts.isClassDeclaration);
}

/** The declaration an identifier names, through imports. */
function declarationOf<T extends ts.Declaration>(
  checker: ts.TypeChecker,
  node: ts.Node,
  is: (d: ts.Declaration) => d is T,
): T | undefined {
  let symbol = checker.getSymbolAtLocation(node);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  return symbol?.declarations?.find(is);
}

function describeProperty(
  checker: ts.TypeChecker,
  property: ts.PropertyDeclaration,
): Omit<EnvVariable, 'apps'> {
  const name = property.name.getText();
  const where = `${name} (${property.getSourceFile().fileName})`;
  const docs = ts.getJSDocCommentsAndTags(property).filter(ts.isJSDoc);
  const description = oneLine(ts.getTextOfJSDocComment(docs.at(-1)?.comment) ?? '');
  if (description === '') throw new Error(`${where} has no JSDoc description`);
  const exampleTag = ts.getJSDocTags(property).find((tag) => tag.tagName.text === 'example');
  const example = exampleTag && oneLine(ts.getTextOfJSDocComment(exampleTag.comment) ?? '');
  const decorator = (rule: string): ts.Expression | undefined => {
    const call = ts
      .getDecorators(property)
      ?.map((d) => d.expression)
      .find((e) => ts.isCallExpression(e) && e.expression.getText() === rule);
    return call && ts.isCallExpression(call) ? call.arguments[0] : undefined;
  };
  const number = (rule: string): number | undefined => {
    const argument = decorator(rule);
    return argument && (evaluate(checker, argument, where) as number);
  };
  const inArgument = decorator('IsIn');
  return {
    name,
    description,
    defaultValue: property.initializer && String(evaluate(checker, property.initializer, where)),
    example: example || undefined,
    choices: inArgument && (evaluate(checker, inArgument, where) as Value[]).map(String),
    min: number('Min'),
    max: number('Max'),
  };
}

/** The value of a constant expression: literals, arithmetic, `as const` arrays, constants. */
function evaluate(checker: ts.TypeChecker, node: ts.Expression, where: string): Value {
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node)) {
    return evaluate(checker, node.expression, where);
  }
  if (ts.isArrayLiteralExpression(node))
    return node.elements.map((e) => evaluate(checker, e, where));
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken) {
    return -(evaluate(checker, node.operand, where) as number);
  }
  if (ts.isBinaryExpression(node)) {
    const left = evaluate(checker, node.left, where) as number;
    const right = evaluate(checker, node.right, where) as number;
    switch (node.operatorToken.kind) {
      case ts.SyntaxKind.AsteriskToken:
        return left * right;
      case ts.SyntaxKind.PlusToken:
        return left + right;
      case ts.SyntaxKind.MinusToken:
        return left - right;
      case ts.SyntaxKind.SlashToken:
        return left / right;
    }
  }
  if (ts.isIdentifier(node)) {
    const constant = declarationOf(checker, node, ts.isVariableDeclaration);
    if (constant?.initializer) return evaluate(checker, constant.initializer, where);
  }
  throw new Error(`${where}: cannot work out \`${node.getText()}\`; use a literal or a constant`);
}

/** The validation rules a reader needs, as sentences; `quote` wraps values. */
function rules(v: EnvVariable, quote: string): string[] {
  const sentences: string[] = [];
  if (v.choices) {
    const quoted = v.choices.map((c) => `${quote}${c}${quote}`);
    sentences.push(`One of ${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}.`);
  }
  if (v.min !== undefined && v.max !== undefined) sentences.push(`From ${v.min} to ${v.max}.`);
  else if (v.min !== undefined) sentences.push(`At least ${v.min}.`);
  else if (v.max !== undefined) sentences.push(`At most ${v.max}.`);
  return sentences;
}

/** Variables of every app first, then by first app, each app's own before shared ones. */
function groupVariables(variables: EnvVariable[], apps: readonly string[]): EnvVariable[] {
  const key = (v: EnvVariable): number[] => [
    v.apps.length === apps.length ? 0 : 1,
    apps.indexOf(v.apps[0]),
    v.apps.length,
    v.defaultValue === undefined ? 0 : 1, // required ones first
  ];
  const compare = (a: number[], b: number[]): number => {
    const i = a.findIndex((x, j) => x !== b[j]);
    return i < 0 ? 0 : a[i] - b[i];
  };
  // Array sort is stable: declaration order holds within a group.
  return [...variables].sort((a, b) => compare(key(a), key(b)));
}

function orderApps(apps: readonly string[]): string[] {
  const rank = (app: string): number => {
    const i = APP_ORDER.indexOf(app);
    return i < 0 ? APP_ORDER.length : i;
  };
  return [...apps].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function appsLabel(apps: readonly string[], allApps: readonly string[]): string {
  return apps.length === allApps.length ? 'every app' : apps.join(', ');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A value as a line of `.env.example` needs it: quoted when it has spaces or quotes. */
function envText(value: string): string {
  return /[\s#"'$\\]/.test(value) ? JSON.stringify(value) : value;
}

/** Formats as `npm run lint` expects, through the Prettier CLI (its API is ESM-only in Jest). */
function prettier(root: string, path: string, text: string): string {
  const bin = join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs');
  return execFileSync(process.execPath, [bin, '--stdin-filepath', join(root, path)], {
    input: text,
    encoding: 'utf8',
  });
}

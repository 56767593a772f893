import { getMetadataStorage, validateSync, ValidationError } from 'class-validator';

/** Start-up stops with this when a variable is missing or breaks its rule. */
export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';

  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads the variables a class-validator class declares from `env`, applies the class's
 * defaults for unset or empty variables, converts each value to the type of its default
 * (number or boolean; text otherwise), and validates.
 * @throws ConfigError naming each bad variable and its rule, never its value.
 */
export function readEnv<T extends object>(
  envClass: new () => T,
  env: Readonly<Record<string, string | undefined>>,
): T {
  const instance = new envClass();
  const fields = instance as Record<string, unknown>;
  for (const name of declaredProperties(envClass)) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') fields[name] = convert(raw, fields[name]);
  }
  const errors = validateSync(instance, { forbidUnknownValues: true });
  if (errors.length > 0) throw new ConfigError(errors.flatMap(describe));
  return instance;
}

/** Text as the type of the default: `'8080'` -> 8080 (NaN fails validation), `'true'` -> true. */
function convert(raw: string, fallback: unknown): unknown {
  if (typeof fallback === 'number') return raw.trim() === '' ? NaN : Number(raw);
  if (typeof fallback === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  return raw;
}

function declaredProperties(envClass: new () => object): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(envClass, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))];
}

/** One line per broken rule; class-validator's default messages do not contain the value. */
function describe(error: ValidationError): string[] {
  const rules = Object.entries(error.constraints ?? {});
  return rules.map(([rule, message]) => `${error.property} (${rule}): ${message}`);
}

import 'reflect-metadata';

import { plainToInstance } from 'class-transformer';
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
 * Reads the variables a class-validator class declares from `env`, converts them to the
 * property types (numbers from strings; booleans need an explicit transform), applies the
 * class's defaults for unset or empty variables, and validates.
 * @throws ConfigError naming each bad variable and its rule, never its value.
 */
export function readEnv<T extends object>(
  envClass: new () => T,
  env: Readonly<Record<string, string | undefined>>,
): T {
  const names = declaredProperties(envClass);
  const given = Object.fromEntries(
    names.filter((name) => env[name] !== undefined && env[name] !== '').map((n) => [n, env[n]]),
  );
  const instance = plainToInstance(envClass, given, { enableImplicitConversion: true });
  const errors = validateSync(instance, { forbidUnknownValues: true });
  if (errors.length > 0) throw new ConfigError(errors.flatMap(describe));
  return instance;
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

import {
  getMetadataStorage,
  ValidationArguments,
  ValidationTypes,
  ValidatorConstraintInterface,
} from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

/** One rule of one property, ready to run. */
interface Rule {
  readonly name: string;
  readonly metadata: ValidationMetadata;
  readonly constraint: ValidatorConstraintInterface;
}

/** The rules of one property, in class-validator's order. */
interface PropertyRules {
  readonly property: string;
  /** `@IsOptional` / `@ValidateIf`: the property is checked only when all hold. */
  readonly conditions: readonly ((object: object, value: unknown) => boolean)[];
  /** `@IsDefined`, checked first and whatever the value. */
  readonly defined: readonly Rule[];
  readonly rules: readonly Rule[];
}

/**
 * A checker derived once from a class's class-validator rules (docs/performance.md): the
 * same rules, messages and order as `validateSync` with `stopAtFirstError`, without building
 * an instance or an error tree per call. Supports the rule kinds call classes use
 * (conditional, defined, custom and the built-in decorators, which are custom ones); a class
 * using anything else is refused when the checker is made, so the classes stay the single
 * definition of the rules.
 */
export class CallChecker {
  private readonly properties: readonly PropertyRules[];

  constructor(target: new () => object) {
    const storage = getMetadataStorage();
    const metadatas = storage.getTargetValidationMetadatas(target, '', true, false);
    const grouped = storage.groupByPropertyName(metadatas);
    this.properties = Object.entries(grouped).map(([property, list]) => compile(property, list));
  }

  /** The first broken rule as `message (rule)`, or undefined when `call` follows them all. */
  check(call: Record<string, unknown>): string | undefined {
    for (const p of this.properties) {
      const value = call[p.property];
      if (!p.conditions.every((condition) => condition(call, value))) continue;
      const broken = firstBroken(p.defined, call, value) ?? firstBroken(p.rules, call, value);
      if (broken) return broken;
    }
    return undefined;
  }
}

function compile(property: string, list: ValidationMetadata[]): PropertyRules {
  const conditions: PropertyRules['conditions'][number][] = [];
  const defined: Rule[] = [];
  const rules: Rule[] = [];
  for (const metadata of list) {
    if (metadata.each || metadata.always === false) unsupported(property, 'each');
    if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      conditions.push(metadata.constraints[0] as PropertyRules['conditions'][number]);
    } else if (metadata.type === ValidationTypes.IS_DEFINED) {
      defined.push(...ruleOf(metadata));
    } else if (metadata.type === ValidationTypes.CUSTOM_VALIDATION && !metadata.validateIf) {
      rules.push(...ruleOf(metadata));
    } else {
      unsupported(property, metadata.type);
    }
  }
  return { property, conditions, defined, rules };
}

function ruleOf(metadata: ValidationMetadata): Rule[] {
  const constraints = getMetadataStorage().getTargetValidatorConstraints(metadata.constraintCls);
  return constraints.map((c) => {
    if (c.async) unsupported(metadata.propertyName, 'async');
    return { name: c.name || metadata.name || metadata.type, metadata, constraint: c.instance };
  });
}

function firstBroken(rules: readonly Rule[], object: object, value: unknown): string | undefined {
  for (const rule of rules) {
    const args: ValidationArguments = {
      targetName: object.constructor?.name ?? '',
      property: rule.metadata.propertyName,
      object,
      value,
      constraints: rule.metadata.constraints,
    };
    if (rule.constraint.validate(value, args) === true) continue;
    return `${message(rule, args)} (${rule.name})`;
  }
  return undefined;
}

/** The rule's message with `$property` and `$constraintN` filled in (never `$value`). */
function message(rule: Rule, args: ValidationArguments): string {
  const own = rule.metadata.message;
  let text =
    typeof own === 'function'
      ? own(args)
      : (own ?? rule.constraint.defaultMessage?.(args) ?? 'invalid');
  (args.constraints ?? []).forEach((constraint: unknown, index: number) => {
    text = text.split(`$constraint${index + 1}`).join(String(constraint));
  });
  return text.split('$property').join(args.property);
}

function unsupported(property: string, kind: string): never {
  throw new Error(`CallChecker does not support ${kind} rules (property ${property})`);
}

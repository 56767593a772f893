import { BadRequestException, Type, ValidationError, ValidationPipe } from '@nestjs/common';
import { ValidateIf } from 'class-validator';

/**
 * Validates admin request bodies and queries against their DTO classes: unknown fields are
 * refused, and the answer names each field (with its path) and the rule it broke.
 * `expectedType` is the DTO class where the parameter's declared type cannot name it (a
 * generic one).
 */
export function adminValidationPipe(expectedType?: Type): ValidationPipe {
  return new ValidationPipe({
    expectedType,
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) =>
      new BadRequestException({ code: 'invalid_request', message: describe(errors).join('; ') }),
  });
}

function describe(errors: readonly ValidationError[], path = ''): string[] {
  return errors.flatMap((error) => {
    const field = path ? `${path}.${error.property}` : error.property;
    const own = Object.entries(error.constraints ?? {}).map(
      ([rule, message]) => `${field}: ${message.replace(`${error.property} `, '')} (${rule})`,
    );
    return [...own, ...describe(error.children ?? [], field)];
  });
}

/**
 * A field a PATCH body may leave out. Unlike class-validator's `IsOptional`, which skips null
 * too, a null is checked by the field's own rules and refused: it never reaches the database
 * as a value a NOT NULL column cannot take.
 */
export function AbsentOrValid(): PropertyDecorator {
  return ValidateIf((_dto, value) => value !== undefined);
}

import {
  IsDefined,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  ValidateBy,
  ValidateIf,
  ValidationOptions,
} from 'class-validator';

import { parseDateTime } from './timestamps';

/** An ISO 8601 date-time with a time zone (see `ISO_DATE_TIME`). */
function IsDateTime(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isDateTime',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && !Number.isNaN(parseDateTime(value)),
        defaultMessage: (args) =>
          `${args?.property ?? 'value'} must be an ISO 8601 date-time with a time zone`,
      },
    },
    options,
  );
}

/**
 * Whether a call lacks an id field. An empty string counts as absent: analytics-kotlin sends
 * `"userId": ""` beside the `anonymousId` of a user not yet identified.
 */
const hasNo = (field: string) => (call: object) => {
  const value = (call as Record<string, unknown>)[field];
  return value === undefined || value === '';
};

/**
 * What every call of the tracking API has. These classes are the single definition of a
 * valid call; ingest validates instances built without class-transformer (see
 * `validateCall`), after ids sent as numbers were turned into strings.
 */
export abstract class BaseCall {
  /** Unique per call; generated when absent. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  messageId?: string;

  @IsOptional()
  @IsDateTime()
  timestamp?: string;

  /** When the client sent the call; with `timestamp`, corrects the client's clock skew. */
  @IsOptional()
  @IsDateTime()
  sentAt?: string;

  @IsOptional()
  @IsObject()
  context?: Record<string, unknown>;

  /** Which destinations receive the call (docs/architecture.md, "Security"). */
  @IsOptional()
  @IsObject()
  integrations?: Record<string, unknown>;
}

/** A call about one user: `userId` or `anonymousId` is required. */
export abstract class UserCall extends BaseCall {
  /** The user's id in the customer's system. */
  @ValidateIf(hasNo('anonymousId'))
  @IsDefined({ message: 'userId or anonymousId is required' })
  @IsString()
  @IsNotEmpty()
  userId?: string;

  /** A pseudonymous id. */
  @ValidateIf(hasNo('userId'))
  @IsDefined({ message: 'userId or anonymousId is required' })
  @IsString()
  @IsNotEmpty()
  anonymousId?: string;
}

/** `track`: a user did something. */
export class TrackCall extends UserCall {
  @IsString()
  @IsNotEmpty()
  event!: string;

  @IsOptional()
  @IsObject()
  properties?: Record<string, unknown>;
}

/** `page`: a user viewed a web page. */
export class PageCall extends UserCall {
  @IsOptional()
  @IsString()
  name?: string;

  @IsOptional()
  @IsString()
  category?: string;

  @IsOptional()
  @IsObject()
  properties?: Record<string, unknown>;
}

/** `screen`: a user viewed an app screen. */
export class ScreenCall extends PageCall {}

/** `identify`: who the user is. */
export class IdentifyCall extends UserCall {
  @IsOptional()
  @IsObject()
  traits?: Record<string, unknown>;
}

/** `group`: the user belongs to a group. */
export class GroupCall extends UserCall {
  @IsString()
  @IsNotEmpty()
  groupId!: string;

  @IsOptional()
  @IsObject()
  traits?: Record<string, unknown>;
}

/** `alias`: `previousId` and `userId` are the same user. */
export class AliasCall extends BaseCall {
  /** The new identity. */
  @IsString()
  @IsNotEmpty()
  userId!: string;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  anonymousId?: string;

  /** The previous identity. */
  @IsString()
  @IsNotEmpty()
  previousId!: string;
}

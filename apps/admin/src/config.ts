import { IsInt, Matches, Max, Min } from 'class-validator';

import { MAX_SECRET_OVERLAP_SECONDS } from '@app/contracts';
import {
  CommonConfig,
  commonConfig,
  ConfigError,
  deepFreeze,
  readEnv,
  SealedSecretsEnv,
} from '@app/config';

import {
  AdminToken,
  NAMED_TOKEN_PATTERN,
  namedTokenProblems,
  parseNamedTokens,
} from './auth/admin-tokens';

/** The admin app's variables: the shared ones plus its own. */
class AdminEnv extends SealedSecretsEnv {
  /** HTTP port of the admin API (0 picks a free one). */
  @IsInt()
  @Min(0)
  @Max(65_535)
  ADMIN_PORT: number = 8081;

  /**
   * Bearer tokens that may use the admin API, comma-separated, each of at least 24 URL-safe
   * characters. Each may read and change everything, and the audit log names it `default`
   * (ADMIN_NAMED_TOKENS adds tokens with names of their own and read-only ones). To rotate, list the new token beside the old one, roll, then remove the old.
   * `npm start` and `npm test` make one into `.local/admin-token` when it is unset.
   */
  @Matches(/^[A-Za-z0-9._~+/=-]{24,}(,[A-Za-z0-9._~+/=-]{24,})*$/, {
    message: 'ADMIN_TOKENS must be tokens of at least 24 URL-safe characters, comma-separated',
  })
  ADMIN_TOKENS!: string;

  /**
   * More admin tokens, each with a name and a scope, comma-separated `name:scope:token`: the name
   * (lower-case letters, digits, `_.-`, up to 64) is what the audit log records; the scope is
   * `read` (GET only; every change answers 403 `token_read_only`) or `full`; the token as in
   * ADMIN_TOKENS. Example: `grafana:read:<token>,deploy-bot:full:<token>`. Empty: none.
   */
  @Matches(new RegExp(`^$|^${entry()}(,${entry()})*$`), {
    message:
      'ADMIN_NAMED_TOKENS must be name:scope:token entries, comma-separated (name: a-z 0-9 _ . -; ' +
      'scope: read or full; token: at least 24 URL-safe characters)',
  })
  ADMIN_NAMED_TOKENS: string = '';

  /**
   * Longest wait for Kafka to acknowledge the delete notifications or sync identifies an admin
   * request sends, in milliseconds; the request then answers 503 and commits nothing.
   */
  @IsInt()
  @Min(100)
  @Max(600_000)
  ADMIN_PRODUCE_TIMEOUT_MS: number = 30_000;

  /**
   * Days of delivery ledger kept, today included; older days' partitions are dropped whole.
   * Each day holds one row per delivery (about 1 KB with its attempts).
   */
  @IsInt()
  @Min(1)
  @Max(90)
  LEDGER_RETENTION_DAYS: number = 3;

  /**
   * Seconds a rotated-out destination secret keeps signing beside the new one when the rotate
   * request does not say (docs/api.md, "Secret rotation"); 0 drops it at once. At most 30 days.
   */
  @IsInt()
  @Min(0)
  @Max(MAX_SECRET_OVERLAP_SECONDS)
  SECRET_ROTATION_OVERLAP_SECONDS: number = 86_400;
}

/** The admin app's typed, frozen configuration. */
export interface AdminConfig extends CommonConfig {
  readonly admin: {
    /** ADMIN_TOKENS: full tokens, named `default`. */
    readonly tokens: readonly string[];
    /** ADMIN_NAMED_TOKENS. */
    readonly namedTokens: readonly AdminToken[];
    readonly secretsKey: string;
    /** Longest wait for Kafka's acknowledgement of one send, in milliseconds. */
    readonly produceTimeoutMs: number;
    /** Days of delivery ledger kept, today included. */
    readonly ledgerRetentionDays: number;
    /** Seconds a rotated-out secret keeps signing when a rotation does not say. */
    readonly secretOverlapSeconds: number;
  };
}

/** Reads and validates the admin app's configuration; the only reader of `process.env`. */
export function loadAdminConfig(env: NodeJS.ProcessEnv = process.env): AdminConfig {
  const vars = readEnv(AdminEnv, env);
  const tokens = vars.ADMIN_TOKENS.split(',');
  const namedTokens = parseNamedTokens(vars.ADMIN_NAMED_TOKENS);
  const problems = namedTokenProblems(namedTokens, tokens);
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze({
    ...commonConfig('admin', vars, vars.ADMIN_PORT),
    admin: {
      tokens,
      namedTokens,
      secretsKey: vars.SECRETS_ENCRYPTION_KEY,
      produceTimeoutMs: vars.ADMIN_PRODUCE_TIMEOUT_MS,
      ledgerRetentionDays: vars.LEDGER_RETENTION_DAYS,
      secretOverlapSeconds: vars.SECRET_ROTATION_OVERLAP_SECONDS,
    },
  });
}

/** {@link NAMED_TOKEN_PATTERN} without its anchors, to repeat in a list. */
function entry(): string {
  return `(?:${NAMED_TOKEN_PATTERN.source.slice(1, -1)})`;
}

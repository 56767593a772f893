import { IsInt, Matches, Max, Min } from 'class-validator';

import { BaseEnv, CommonConfig, commonConfig, deepFreeze, readEnv } from '@app/config';

/** The admin app's variables: the shared ones plus its own. */
class AdminEnv extends BaseEnv {
  /** HTTP port of the admin API (0 picks a free one). */
  @IsInt()
  @Min(0)
  @Max(65_535)
  ADMIN_PORT: number = 8081;

  /** Bearer tokens that may use the admin API, comma-separated (several, so they can be rotated). */
  @Matches(/^[A-Za-z0-9._~+/=-]{24,}(,[A-Za-z0-9._~+/=-]{24,})*$/, {
    message: 'ADMIN_TOKENS must be tokens of at least 24 URL-safe characters, comma-separated',
  })
  ADMIN_TOKENS!: string;

  /** Key that encrypts shared secrets at rest: 32 random bytes, base64 (`openssl rand -base64 32`). */
  @Matches(/^[A-Za-z0-9+/]{43}=$/, {
    message: 'SECRETS_ENCRYPTION_KEY must be 32 bytes, base64 (openssl rand -base64 32)',
  })
  SECRETS_ENCRYPTION_KEY!: string;

  /**
   * Longest wait for Kafka to acknowledge a send of delete notifications or sync identifies,
   * in milliseconds; the request then answers 503 and commits nothing.
   */
  @IsInt()
  @Min(100)
  @Max(600_000)
  ADMIN_PRODUCE_TIMEOUT_MS: number = 30_000;
}

/** The admin app's typed, frozen configuration. */
export interface AdminConfig extends CommonConfig {
  readonly admin: {
    readonly tokens: readonly string[];
    readonly secretsKey: string;
    /** Longest wait for Kafka's acknowledgement of one send, in milliseconds. */
    readonly produceTimeoutMs: number;
  };
}

/** Reads and validates the admin app's configuration; the only reader of `process.env`. */
export function loadAdminConfig(env: NodeJS.ProcessEnv = process.env): AdminConfig {
  const vars = readEnv(AdminEnv, env);
  return deepFreeze({
    ...commonConfig('admin', vars, vars.ADMIN_PORT),
    admin: {
      tokens: vars.ADMIN_TOKENS.split(','),
      secretsKey: vars.SECRETS_ENCRYPTION_KEY,
      produceTimeoutMs: vars.ADMIN_PRODUCE_TIMEOUT_MS,
    },
  });
}

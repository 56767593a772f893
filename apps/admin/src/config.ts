import { IsInt, Max, Min } from 'class-validator';

import { BaseEnv, CommonConfig, commonConfig, readEnv } from '@app/config';

/** The admin app's variables: the shared ones plus its own. */
class AdminEnv extends BaseEnv {
  /** HTTP port of the admin app (0 picks a free one). */
  @IsInt()
  @Min(0)
  @Max(65_535)
  ADMIN_PORT: number = 8081;
}

/** The admin app's typed, frozen configuration. */
export type AdminConfig = CommonConfig;

/** Reads and validates the admin app's configuration; the only reader of `process.env`. */
export function loadAdminConfig(env: NodeJS.ProcessEnv = process.env): AdminConfig {
  const vars = readEnv(AdminEnv, env);
  return commonConfig('admin', vars, vars.ADMIN_PORT);
}

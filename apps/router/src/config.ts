import { IsInt, Max, Min } from 'class-validator';

import { BaseEnv, CommonConfig, commonConfig, readEnv } from '@app/config';

/** The router app's variables: the shared ones plus its own. */
class RouterEnv extends BaseEnv {
  /** HTTP port of the router app (0 picks a free one). */
  @IsInt()
  @Min(0)
  @Max(65_535)
  ROUTER_PORT: number = 8082;
}

/** The router app's typed, frozen configuration. */
export type RouterConfig = CommonConfig;

/** Reads and validates the router app's configuration; the only reader of `process.env`. */
export function loadRouterConfig(env: NodeJS.ProcessEnv = process.env): RouterConfig {
  const vars = readEnv(RouterEnv, env);
  return commonConfig('router', vars, vars.ROUTER_PORT);
}

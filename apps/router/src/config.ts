import { IsInt, Max, Min } from 'class-validator';

import { BaseEnv, CommonConfig, commonConfig, deepFreeze, readEnv } from '@app/config';

/** The router app's variables: the shared ones plus its own. */
class RouterEnv extends BaseEnv {
  /** HTTP port of the router app (0 picks a free one). */
  @IsInt()
  @Min(0)
  @Max(65_535)
  ROUTER_PORT: number = 8082;

  /** Partitions of `sluice.calls.v1` handled at once by one router process. */
  @IsInt()
  @Min(1)
  @Max(64)
  ROUTER_PARTITIONS_CONCURRENTLY: number = 3;

  /**
   * Calls of one partition of `sluice.calls.v1` in flight at once (calls of one user stay in
   * order). Concurrent calls share produce requests, so this bounds the records per request.
   */
  @IsInt()
  @Min(1)
  @Max(5_000)
  ROUTER_MAX_IN_FLIGHT: number = 64;

  /**
   * Seconds a call's (source, user, messageId) is remembered on its partition of the calls topic,
   * which its source and user pick, so a resent call always meets its first copy: a call seen
   * again within them is not routed (counted as deduplicated). 0 turns de-duplication off.
   * Memory grows with the calls remembered (docs/operations.md, "De-duplication").
   */
  @IsInt()
  @Min(0)
  @Max(7 * 24 * 3_600)
  ROUTER_DEDUP_WINDOW_SECONDS: number = 900;
}

/** The router app's typed, frozen configuration. */
export interface RouterConfig extends CommonConfig {
  readonly router: {
    /** Partitions of the calls topic handled at once by this process. */
    readonly partitionsConcurrently: number;
    /** Calls of one partition in flight at once. */
    readonly maxInFlightPerPartition: number;
    /** How long a (source, user, messageId) is remembered for de-duplication; 0 when off. */
    readonly dedupWindowMs: number;
  };
}

/** Reads and validates the router app's configuration; the only reader of `process.env`. */
export function loadRouterConfig(env: NodeJS.ProcessEnv = process.env): RouterConfig {
  const vars = readEnv(RouterEnv, env);
  return deepFreeze({
    ...commonConfig('router', vars, vars.ROUTER_PORT),
    router: {
      partitionsConcurrently: vars.ROUTER_PARTITIONS_CONCURRENTLY,
      maxInFlightPerPartition: vars.ROUTER_MAX_IN_FLIGHT,
      dedupWindowMs: vars.ROUTER_DEDUP_WINDOW_SECONDS * 1_000,
    },
  });
}

import { IsInt, Max, Min } from 'class-validator';

import { BaseEnv, CommonConfig, commonConfig, readEnv } from '@app/config';

/** The ingest app's variables: the shared ones plus its own. */
class IngestEnv extends BaseEnv {
  /** HTTP port of the ingest app (0 picks a free one). */
  @IsInt()
  @Min(0)
  @Max(65_535)
  INGEST_PORT: number = 8080;
}

/** The ingest app's typed, frozen configuration. */
export type IngestConfig = CommonConfig;

/** Reads and validates the ingest app's configuration; the only reader of `process.env`. */
export function loadIngestConfig(env: NodeJS.ProcessEnv = process.env): IngestConfig {
  const vars = readEnv(IngestEnv, env);
  return commonConfig('ingest', vars, vars.INGEST_PORT);
}

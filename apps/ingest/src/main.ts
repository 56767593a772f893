import { NestFastifyApplication } from '@nestjs/platform-fastify';

import {
  closeOnSignal,
  createHttpApp,
  exitOnStartupError,
  HttpAppOptions,
  listen,
} from '@app/runtime';

import { AppModule } from './app.module';
import { IngestConfig, loadIngestConfig } from './config';

/** Creates and starts the ingest app. */
export async function startIngest(
  config: IngestConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const app = await createHttpApp(AppModule.forRoot(config), config, options);
  await listen(app, config);
  return app;
}

if (require.main === module) {
  (async () => {
    const config = loadIngestConfig();
    closeOnSignal([await startIngest(config)], config.shutdownTimeoutMs);
  })().catch(exitOnStartupError);
}

import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { createHttpApp, HttpAppOptions, listen, runMain } from '@app/runtime';

import { AppModule } from './app.module';
import { DispatcherConfig, loadDispatcherConfig } from './config';

/** Creates and starts the dispatcher app. */
export async function startDispatcher(
  config: DispatcherConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const app = await createHttpApp(AppModule.forRoot(config), config, options);
  await listen(app, config);
  return app;
}

if (require.main === module) runMain(loadDispatcherConfig, (config) => startDispatcher(config));

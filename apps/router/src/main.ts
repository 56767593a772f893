import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { createHttpApp, HttpAppOptions, listen, runMain } from '@app/runtime';

import { AppModule } from './app.module';
import { RouterConfig, loadRouterConfig } from './config';

/** Creates and starts the router app. */
export async function startRouter(
  config: RouterConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const app = await createHttpApp(AppModule.forRoot(config), config, options);
  await listen(app, config);
  return app;
}

if (require.main === module) runMain(loadRouterConfig, (config) => startRouter(config));

import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { createHttpApp, HttpAppOptions, listen, runMain } from '@app/runtime';

import { AppModule } from './app.module';
import { AdminConfig, loadAdminConfig } from './config';

/** Creates and starts the admin app. */
export async function startAdmin(
  config: AdminConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const app = await createHttpApp(AppModule.forRoot(config), config, options);
  await listen(app, config);
  return app;
}

if (require.main === module) runMain(loadAdminConfig, (config) => startAdmin(config));

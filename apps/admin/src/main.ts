import { NestFastifyApplication } from '@nestjs/platform-fastify';

import {
  closeOnSignal,
  createHttpApp,
  exitOnStartupError,
  HttpAppOptions,
  listen,
} from '@app/runtime';

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

if (require.main === module) {
  (async () => {
    const config = loadAdminConfig();
    closeOnSignal([await startAdmin(config)], config.shutdownTimeoutMs);
  })().catch(exitOnStartupError);
}

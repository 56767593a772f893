import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

import { createHttpApp, HttpAppOptions, listen, runMain } from '@app/runtime';

import { countAdminRequests } from './admin.metrics';
import { AppModule } from './app.module';
import { AdminConfig, loadAdminConfig } from './config';
import { adminValidationPipe } from './validation';

/** Where the admin API's OpenAPI document is served (no token needed). */
export const OPENAPI_PATH = '/admin/v1/openapi.json';

/** Creates and starts the admin app. */
export async function startAdmin(
  config: AdminConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const app = await createHttpApp(AppModule.forRoot(config), config, options);
  acceptEmptyJsonBodies(app);
  app.useGlobalPipes(adminValidationPipe());
  countAdminRequests(app);
  serveOpenApi(app);
  await listen(app, config);
  return app;
}

/**
 * JSON bodies as usual, except that an empty one (a `POST .../enable` sent with a JSON
 * content type) is no body rather than a 400.
 */
function acceptEmptyJsonBodies(app: NestFastifyApplication): void {
  app.useBodyParser('application/json', {}, (_request, body, done) => {
    if (body.length === 0) return done(null, undefined);
    try {
      done(null, JSON.parse(body.toString('utf8')));
    } catch {
      done(Object.assign(new Error('the body is not valid JSON'), { statusCode: 400 }), undefined);
    }
  });
}

function serveOpenApi(app: NestFastifyApplication): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Sluice admin API')
      .setDescription('Sources, write keys, webhook destinations and usage.')
      .setVersion('1')
      .addBearerAuth()
      .build(),
  );
  app
    .getHttpAdapter()
    .getInstance()
    .get(OPENAPI_PATH, (_request, reply) => reply.send(document));
}

if (require.main === module) runMain(loadAdminConfig, (config) => startAdmin(config));

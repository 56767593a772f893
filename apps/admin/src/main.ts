import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

import { connectConsumers } from '@app/kafka';
import { createHttpApp, HttpAppOptions, listen, runMain, transportSettings } from '@app/runtime';

import { countAdminRequests } from './admin.metrics';
import { AppModule } from './app.module';
import { AdminConfig, loadAdminConfig } from './config';
import { serveConsole } from './console/console.routes';
import { serveDocsPage } from './docs-page';
import { adminKafka } from './kafka-topology';
import { holdsNul } from './nul-text';
import { adminValidationPipe } from './validation';

/** Where the admin API's OpenAPI document is served (no token needed, like its docs page). */
export const OPENAPI_PATH = '/admin/v1/openapi.json';

/** Creates and starts the admin app: the REST API and the consumer of delivery outcomes. */
export async function startAdmin(
  config: AdminConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const app = await createHttpApp(AppModule.forRoot(config), config, options);
  connectConsumers(app, adminKafka(config), transportSettings(app, config));
  acceptEmptyJsonBodies(app);
  refuseNulText(app);
  app.useGlobalPipes(adminValidationPipe());
  countAdminRequests(app);
  serveOpenApi(app);
  serveConsole(app.getHttpAdapter().getInstance());
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

/** Refuses an admin API request whose query or body holds U+0000 (see {@link holdsNul}). */
function refuseNulText(app: NestFastifyApplication): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('preValidation', (request, reply, done) => {
      if (!request.url.startsWith('/admin/v1/')) return done();
      if (!holdsNul(request.query) && !holdsNul(request.body)) return done();
      void reply.code(400).send({
        code: 'invalid_request',
        message: 'a text value holds the character U+0000, which cannot be stored',
      });
    });
}

/** The OpenAPI document's description: what the API holds, and how a large sync is sent. */
const OPENAPI_DESCRIPTION = [
  'Sources, write keys, webhook destinations, usage, deletion requests, audiences and ',
  'computed traits.\n\n',
  '**Syncs are paged.** A sync takes the full current member list, which may hold hundreds ',
  'of thousands of users: open a sync (`POST …/syncs`), upload the list in pages of up to ',
  '10,000 members (`POST …/syncs/{syncId}/members`, in any order, any number of pages; a ',
  'user uploaded twice keeps the last value), then commit it (`POST …/syncs/{syncId}/commit`). ',
  'The commit publishes only the changes since the last committed sync, waits until Kafka ',
  'acknowledged every identify, and only then stores the new membership, in one transaction: ',
  'after a crash or a 503 the sync is still open and a second commit sends the changes again ',
  '(duplicates at worst, never a lost change). Pages rather than one streamed body: each ',
  'request stays small (under the 1 MiB body limit) and quick, a failed page is simply sent ',
  'again (uploads are idempotent), the uploaded pages survive a restart of the admin app ',
  '(they are stored in PostgreSQL), and any HTTP client can send them; a single streamed ',
  'NDJSON body would have to start over on any failure and needs a streaming client.',
].join('');

function serveOpenApi(app: NestFastifyApplication): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Sluice admin API')
      .setDescription(OPENAPI_DESCRIPTION)
      .setVersion('1')
      .addBearerAuth({
        type: 'http',
        scheme: 'bearer',
        // Not a JWT: an opaque token the operator configures (ADMIN_TOKENS, ADMIN_NAMED_TOKENS).
        bearerFormat: undefined,
        description:
          "An opaque admin token from the admin app's configuration (ADMIN_TOKENS, or " +
          'ADMIN_NAMED_TOKENS with a name and a scope): a `read` token may only GET; every ' +
          'change answers 403 `token_read_only` to it.',
      })
      .build(),
  );
  // The admin API only: health and metrics (every app's, no token) are in operations.md.
  for (const path of Object.keys(document.paths)) {
    if (!path.startsWith('/admin/v1/')) delete document.paths[path];
  }
  const fastify = app.getHttpAdapter().getInstance();
  fastify.get(OPENAPI_PATH, (_request, reply) => reply.send(document));
  serveDocsPage(fastify, OPENAPI_PATH);
}

if (require.main === module) runMain('admin', loadAdminConfig, (config) => startAdmin(config));

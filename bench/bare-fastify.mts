/**
 * Context for ratio (b): a bare Fastify server (the version the apps use, no Nest) that reads
 * the body as bytes with the same parser set-up as ingest, parses it with JSON.parse and
 * answers 200 `{"success":true}`. Nothing else. Its rate over the bare `node:http` server's is
 * what the HTTP framework alone leaves of the limit, before ingest does any work.
 *
 * `node bench/bare-fastify.mts` listens on 127.0.0.1 and a free port, prints `{"port":N}`, and
 * stops on SIGTERM or SIGINT.
 */
import Fastify from 'fastify';

const SUCCESS = '{"success":true}';
/** Ingest's own limit on a raw body (500 KB and room for gzip's overhead). */
const BODY_LIMIT_BYTES = 512_000 + 64 * 1024;

const app = Fastify({ bodyLimit: BODY_LIMIT_BYTES });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/v1/:route', async (request, reply) => {
  JSON.parse((request.body as Buffer).toString('utf8'));
  void reply.header('content-type', 'application/json; charset=utf-8');
  return SUCCESS;
});

const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ port: Number(new URL(address).port) })}\n`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void app.close().then(() => process.exit(0)));
}

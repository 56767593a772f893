/**
 * The physical limit for `/v1/track`: a bare `node:http` server that reads the whole body,
 * parses it with JSON.parse and answers 200 `{"success":true}`, in its own process like
 * ingest. Nothing else: no auth, no validation, no Kafka.
 *
 * `node bench/bare-server.mts` listens on 127.0.0.1 and a free port, prints `{"port":N}`, and
 * stops on SIGTERM or SIGINT.
 */
import { createServer } from 'node:http';

const SUCCESS = Buffer.from('{"success":true}');
const INVALID = Buffer.from('{"code":"invalid_json","message":"the body is not valid JSON"}');
/** Same as Fastify's default, so idle connections live as long on both sides. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    let answer = SUCCESS;
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      answer = INVALID;
    }
    response.writeHead(answer === SUCCESS ? 200 : 400, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': answer.length,
    });
    response.end(answer);
  });
});
server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}

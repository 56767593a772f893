/**
 * What the bare `node:http` servers of the ingest benchmark share: how they answer, listen and
 * stop. Each listens on 127.0.0.1 and a free port, prints `{"port":N}`, and stops on SIGTERM or
 * SIGINT.
 */
import type { Server, ServerResponse } from 'node:http';

/** Same as Fastify's default, so idle connections live as long on every side. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** Answers with a JSON body written in one go. */
export function answerJson(response: ServerResponse, status: number, body: Buffer): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': body.length,
  });
  response.end(body);
}

/** Listens, prints the port, and closes every connection on SIGTERM or SIGINT. */
export function serve(server: Server): void {
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
}

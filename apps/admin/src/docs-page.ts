import { readFileSync } from 'node:fs';

import type { FastifyInstance } from 'fastify';

import { CONSOLE_CSP } from './console/console.routes';

/** Where the admin API's docs page (swagger-ui) is served. */
export const DOCS_PATH = '/admin/docs';

const HTML = 'text/html; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';

/**
 * The console's policy (the admin app's own origin, no inline script, no framing), but
 * swagger-ui sets inline styles and draws its icons from data: URLs.
 */
const DOCS_CSP = `${CONSOLE_CSP}; style-src 'self' 'unsafe-inline'; img-src 'self' data:`;

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': DOCS_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // An upgraded admin app serves its new swagger-ui at once.
  'cache-control': 'no-cache',
};

/**
 * Serves the docs page of the OpenAPI document at `documentPath`, without a token like the
 * document: the page holds no data, and the requests it makes carry the token its reader
 * enters under Authorize. swagger-ui's files come from swagger-ui-dist (no CDN; pinned in
 * package.json to the version @nestjs/swagger uses, so one copy is installed), read once at
 * start; they are served here because Nest's `SwaggerModule.setup` needs @fastify/static
 * with Fastify, a dependency tree of its own for three files.
 */
export function serveDocsPage(fastify: FastifyInstance, documentPath: string): void {
  const page = docsHtml();
  const files: Readonly<Record<string, readonly [string, string | Buffer]>> = {
    '': [HTML, page],
    '/': [HTML, page],
    '/swagger-ui.css': [CSS, swaggerUiFile('swagger-ui.css')],
    '/swagger-ui-bundle.js': [JS, swaggerUiFile('swagger-ui-bundle.js')],
    '/swagger-ui-init.js': [
      JS,
      `SwaggerUIBundle({ url: ${JSON.stringify(documentPath)}, dom_id: '#swagger-ui' });\n`,
    ],
  };
  for (const [suffix, [contentType, body]] of Object.entries(files)) {
    fastify.get(`${DOCS_PATH}${suffix}`, (_request, reply) => {
      void reply.headers({ ...SECURITY_HEADERS, 'content-type': contentType }).send(body);
    });
  }
}

function swaggerUiFile(file: string): Buffer {
  return readFileSync(require.resolve(`swagger-ui-dist/${file}`));
}

function docsHtml(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sluice admin API</title>
<link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
<script src="${DOCS_PATH}/swagger-ui-init.js"></script>
</body>
</html>
`;
}

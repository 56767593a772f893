import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';

/** Where the operator console is served; its pages call the admin API on the same origin. */
export const CONSOLE_PATH = '/console';

/**
 * The console's files: beside this module in the source tree, and copied beside the compiled
 * module by package.json's build script (SWC compiles TypeScript only).
 */
export const CONSOLE_STATIC_DIR = join(__dirname, 'static');

/**
 * The console's ES modules: app.js, the entry index.html loads, and every module it imports
 * (natively, no bundle). A fixed list, so only these names are routes and a build that lost one
 * stops start-up instead of breaking the page; the spec checks it matches the folder.
 */
export const CONSOLE_MODULES: readonly string[] = [
  'app.js',
  'api.js',
  'dom.js',
  'chart.js',
  'router.js',
  'sources.js',
  'destination.js',
  'delivery-rules.js',
  'delivery-settings.js',
  'secret.js',
  'destinations.js',
  'deliveries.js',
  'delivery.js',
  'health.js',
  'replay.js',
  'dead-letters.js',
  'live.js',
  'audit.js',
];

const JAVASCRIPT = 'text/javascript; charset=utf-8';

/** Each file served, by URL path under {@link CONSOLE_PATH}, with its content type. */
const FILES: Readonly<Record<string, { file: string; contentType: string }>> = {
  '': { file: 'index.html', contentType: 'text/html; charset=utf-8' },
  '/': { file: 'index.html', contentType: 'text/html; charset=utf-8' },
  ...Object.fromEntries(
    CONSOLE_MODULES.map((file) => [`/${file}`, { file, contentType: JAVASCRIPT }]),
  ),
  '/style.css': { file: 'style.css', contentType: 'text/css; charset=utf-8' },
  '/favicon.svg': { file: 'favicon.svg', contentType: 'image/svg+xml' },
};

/**
 * Only the admin app's own origin: no CDN, no inline script or style, no framing, and forms
 * never submit anywhere (the pages send them with fetch), so a token cannot land in a URL.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

/** Headers of every console answer. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // An upgraded admin app serves new files at once.
  'cache-control': 'no-cache',
};

/** The console's files could not be read at start (a build that did not copy them). */
export class ConsoleFilesMissingError extends Error {
  readonly code = 'CONSOLE_FILES_MISSING';
}

/**
 * Serves the operator console's static pages, read once at start, without a token: they
 * hold no data, and every API call they make carries the token the user enters.
 */
export function serveConsole(fastify: FastifyInstance, dir = CONSOLE_STATIC_DIR): void {
  for (const [suffix, { file, contentType }] of Object.entries(FILES)) {
    const body = readConsoleFile(dir, file);
    fastify.get(`${CONSOLE_PATH}${suffix}`, (_request, reply) => {
      void reply.headers({ ...SECURITY_HEADERS, 'content-type': contentType }).send(body);
    });
  }
}

function readConsoleFile(dir: string, file: string): Buffer {
  try {
    return readFileSync(join(dir, file));
  } catch (error) {
    throw new ConsoleFilesMissingError(
      `the console's ${file} cannot be read from ${dir} (does the build copy console/static?): ${
        (error as Error).message
      }`,
    );
  }
}

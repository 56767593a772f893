import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Fastify, { FastifyInstance } from 'fastify';

import {
  CONSOLE_CSP,
  CONSOLE_MODULES,
  CONSOLE_STATIC_DIR,
  ConsoleFilesMissingError,
  serveConsole,
} from './console.routes';

const FILES = ['index.html', 'style.css', 'favicon.svg', ...CONSOLE_MODULES];

describe(serveConsole.name, () => {
  let fastify: FastifyInstance;

  beforeAll(async () => {
    fastify = Fastify();
    serveConsole(fastify);
    await fastify.ready();
  });

  afterAll(async () => {
    await fastify.close();
  });

  it.each([
    ['/console', 'index.html', 'text/html; charset=utf-8'],
    ['/console/', 'index.html', 'text/html; charset=utf-8'],
    ['/console/style.css', 'style.css', 'text/css; charset=utf-8'],
    ['/console/favicon.svg', 'favicon.svg', 'image/svg+xml'],
    ...CONSOLE_MODULES.map((file) => [`/console/${file}`, file, 'text/javascript; charset=utf-8']),
  ])('serves %s as %s with its content type and the CSP', async (url, file, contentType) => {
    const res = await fastify.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(contentType);
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.rawPayload.equals(readFileSync(join(CONSOLE_STATIC_DIR, file)))).toBe(true);
  });

  it('allows only its own origin, no framing and no form submission', () => {
    expect(CONSOLE_CSP).toContain("default-src 'self'");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).toContain("form-action 'none'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe|https?:|data:|\*/);
  });

  it.each([
    '/console/../config.js',
    '/console/%2e%2e/console.routes.js',
    '/console/..%2fconsole.routes.js',
    '/console/static/app.js',
    '/console/app.js.map',
    '/console/console.routes.spec.ts',
  ])('answers 404 for %s (only the listed files are routes)', async (url) => {
    expect((await fastify.inject({ method: 'GET', url })).statusCode).toBe(404);
  });

  it('serves every .js file of the folder, and only those', () => {
    const inFolder = readdirSync(CONSOLE_STATIC_DIR).filter((file) => file.endsWith('.js'));
    expect([...CONSOLE_MODULES].sort()).toEqual(inFolder.sort());
  });

  it('stops start-up with a clear error when the files are missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-console-'));
    try {
      writeFileSync(join(dir, 'index.html'), '<!doctype html>');
      expect(() => serveConsole(Fastify(), dir)).toThrow(ConsoleFilesMissingError);
      expect(() => serveConsole(Fastify(), dir)).toThrow(/app\.js cannot be read/);
      for (const file of ['style.css', 'favicon.svg', ...CONSOLE_MODULES]) {
        writeFileSync(join(dir, file), '');
      }
      rmSync(join(dir, 'live.js'));
      expect(() => serveConsole(Fastify(), dir)).toThrow(/live\.js cannot be read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the console files', () => {
  const read = (file: string): string => readFileSync(join(CONSOLE_STATIC_DIR, file), 'utf8');

  it('name no other origin (no CDN): only the SVG namespace and a placeholder are URLs', () => {
    const allowed = ['http://www.w3.org/2000/svg', 'https://example.com/hooks/sluice'];
    for (const file of FILES) {
      const urls = read(file).match(/\b(https?:)?\/\/[\w.-]+\.[a-z]{2,}[^\s'"`)]*/gi) ?? [];
      expect({ file, urls: urls.filter((u) => !allowed.includes(u)) }).toEqual({
        file,
        urls: [],
      });
    }
  });

  it.each(CONSOLE_MODULES)(
    'never parse text as HTML: %s has no innerHTML, outerHTML, insertAdjacentHTML or document.write',
    (file) => {
      expect(read(file)).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    },
  );

  it.each(CONSOLE_MODULES)('%s imports only served modules of the folder, statically', (file) => {
    const js = read(file);
    const specifiers = [...js.matchAll(/^import\s[^;]*?from\s+'([^']+)';/gm)].map((m) => m[1]);
    expect(js.match(/^import\b/gm)?.length ?? 0).toBe(specifiers.length);
    expect(specifiers.filter((s) => !CONSOLE_MODULES.includes(s.replace(/^\.\//, '')))).toEqual([]);
    expect(specifiers.every((s) => s.startsWith('./'))).toBe(true);
    expect(js).not.toMatch(/\bimport\s*\(|importScripts|new Worker/);
  });

  it('load the script as a module from the same origin, with no inline script or style', () => {
    const html = read('index.html');
    expect(html).toContain('<script type="module" src="/console/app.js"></script>');
    expect(html).not.toMatch(/<script>|<style|\sstyle=|\son\w+=/);
  });

  it('keep the token in sessionStorage only, from the API module alone', () => {
    for (const file of CONSOLE_MODULES) {
      expect({
        file,
        stores: read(file).match(/localStorage|document\.cookie|indexedDB/g),
      }).toEqual({ file, stores: null });
    }
    expect(CONSOLE_MODULES.filter((file) => read(file).includes('sessionStorage'))).toEqual([
      'api.js',
    ]);
  });
});

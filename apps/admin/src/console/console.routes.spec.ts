import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Fastify, { FastifyInstance } from 'fastify';

import {
  CONSOLE_CSP,
  CONSOLE_STATIC_DIR,
  ConsoleFilesMissingError,
  serveConsole,
} from './console.routes';

const FILES = ['index.html', 'app.js', 'style.css', 'favicon.svg'];

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
    ['/console/app.js', 'app.js', 'text/javascript; charset=utf-8'],
    ['/console/style.css', 'style.css', 'text/css; charset=utf-8'],
    ['/console/favicon.svg', 'favicon.svg', 'image/svg+xml'],
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

  it('answers 404 for any other path under /console', async () => {
    const res = await fastify.inject({ method: 'GET', url: '/console/../config.js' });
    expect(res.statusCode).toBe(404);
    expect((await fastify.inject({ method: 'GET', url: '/console/app.js.map' })).statusCode).toBe(
      404,
    );
  });

  it('stops start-up with a clear error when the files are missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-console-'));
    try {
      writeFileSync(join(dir, 'index.html'), '<!doctype html>');
      expect(() => serveConsole(Fastify(), dir)).toThrow(ConsoleFilesMissingError);
      expect(() => serveConsole(Fastify(), dir)).toThrow(/app\.js cannot be read/);
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

  it('never parse text as HTML: no innerHTML, outerHTML, insertAdjacentHTML or document.write', () => {
    expect(read('app.js')).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  it('load the script as a module from the same origin, with no inline script or style', () => {
    const html = read('index.html');
    expect(html).toContain('<script type="module" src="/console/app.js"></script>');
    expect(html).not.toMatch(/<script>|<style|\sstyle=|\son\w+=/);
  });

  it('keep the token in sessionStorage only', () => {
    const js = read('app.js');
    expect(js).toContain('sessionStorage');
    expect(js).not.toMatch(/localStorage|document\.cookie|indexedDB/);
  });
});

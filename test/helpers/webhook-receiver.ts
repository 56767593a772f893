import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { eventually } from './services';

/** One request a receiver got. */
export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** The body's exact bytes. */
  readonly body: Buffer;
  /** Epoch ms when the body was complete. */
  readonly at: number;
}

/** How a receiver answers: a status (with headers and a body), or `hang` (never answer). */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/** TLS material for an HTTPS receiver. */
export interface TlsFiles {
  readonly key: string;
  readonly cert: string;
}

/**
 * A real local webhook endpoint (HTTP or HTTPS on 127.0.0.1) that records every request
 * and every connection, and answers as the test says (200 by default).
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** Connections accepted (for HTTPS: handshakes completed), whether or not a request followed. */
  connections = 0;
  /** TCP connections accepted by an HTTPS receiver, including failed handshakes. */
  tcpConnections = 0;
  answer: (request: ReceivedRequest, index: number) => Answer = () => ({ status: 200 });
  private server?: Server;
  private readonly hanging = new Set<ServerResponse>();

  constructor(private readonly tls?: TlsFiles) {}

  async start(): Promise<this> {
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = {
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks),
          at: Date.now(),
        };
        this.requests.push(request);
        const answer = this.answer(request, this.requests.length - 1);
        if (answer === 'hang') {
          this.hanging.add(res);
          return;
        }
        res.writeHead(answer.status, answer.headers).end(answer.body ?? '{"ok":true}');
      });
    };
    const server = this.tls
      ? createHttpsServer({ key: this.tls.key, cert: this.tls.cert }, handler)
      : createHttpServer(handler);
    server.on(this.tls ? 'secureConnection' : 'connection', () => (this.connections += 1));
    if (this.tls) server.on('connection', () => (this.tcpConnections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return this;
  }

  get port(): number {
    return (this.server?.address() as AddressInfo).port;
  }

  /** The URL of a path on this receiver, with the given host name (127.0.0.1 by default). */
  url(path = '/hook', host = '127.0.0.1'): string {
    return `${this.tls ? 'https' : 'http'}://${host}:${this.port}${path}`;
  }

  /** Waits until `count` requests arrived. */
  async received(count: number, timeoutMs = 20_000): Promise<ReceivedRequest[]> {
    return eventually(
      () => (this.requests.length >= count ? this.requests.slice() : undefined),
      timeoutMs,
      `${count} request(s) at the receiver (got ${this.requests.length})`,
    );
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }
}

/** Certificates made by `openssl` for a test: a CA, a server certificate it signed, a self-signed one. */
export interface TestCertificates {
  /** PEM file of the test CA. */
  readonly caFile: string;
  /** Signed by the test CA for `localhost` and 127.0.0.1. */
  readonly signed: TlsFiles;
  /** Signed by nobody: the same names, its own issuer. */
  readonly selfSigned: TlsFiles;
  remove(): void;
}

/** Makes a throw-away CA and two server certificates with the openssl command. */
export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-tls-'));
  const run = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  };
  const san = 'subjectAltName=DNS:localhost,IP:127.0.0.1';
  writeFileSync(join(dir, 'san.ext'), `${san}\n`);
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Sluice Test CA',
  );
  run(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=localhost',
  );
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  );
  return {
    caFile: join(dir, 'ca.pem'),
    signed: read(dir, 'server'),
    selfSigned: selfSigned(dir, san),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function selfSigned(dir: string, san: string): TlsFiles {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'self.key',
      '-out',
      'self.pem',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      san,
    ],
    { cwd: dir, stdio: 'pipe' },
  );
  return read(dir, 'self');
}

function read(dir: string, name: string): TlsFiles {
  return {
    key: readFileSync(join(dir, `${name}.key`), 'utf8'),
    cert: readFileSync(join(dir, `${name}.pem`), 'utf8'),
  };
}

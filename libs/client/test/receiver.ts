import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** A request the receiver got, its body parsed when it is JSON. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  readonly body: unknown;
  /** `Date.now()` when the whole body had arrived. */
  readonly at: number;
}

/** How to answer a request; `destroy` drops the connection without an answer. */
export interface Reply {
  readonly status?: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly delayMs?: number;
  readonly destroy?: boolean;
}

/** A call as it arrived in a batch. */
export type ReceivedCall = Record<string, unknown>;

/** Chooses the reply to the `n`th request (0-based). */
export type Responder = (request: ReceivedRequest, n: number) => Reply;

const SUCCESS: Reply = { status: 200, body: { success: true } };

/**
 * A loopback `node:http` server on a free port for the client's unit specs: records every
 * request and answers as `respond` says (200 `{"success":true}` unless told otherwise).
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  respond: Responder = () => SUCCESS;
  url = '';
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const received: ReceivedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        raw,
        body: parseJson(raw),
        at: Date.now(),
      };
      this.requests.push(received);
      const reply = this.respond(received, this.requests.length - 1);
      const answer = () => this.answer(response, reply);
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Every call of every batch received so far, in order of arrival. */
  calls(): ReceivedCall[] {
    return this.requests.flatMap((r) => batchOf(r.body));
  }

  /** Waits until `count` calls have arrived. */
  async waitForCalls(count: number, timeoutMs = 5_000): Promise<ReceivedCall[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.calls().length < count) {
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${count} calls; got ${this.calls().length}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return this.calls();
  }

  private answer(response: ServerResponse, reply: Reply): void {
    if (reply.destroy) {
      response.socket?.destroy();
      return;
    }
    const body = JSON.stringify(reply.body ?? {});
    response.writeHead(reply.status ?? 200, {
      'content-type': 'application/json',
      ...reply.headers,
    });
    response.end(body);
  }
}

/** The calls of a batch body; none when it is not one. */
export function batchOf(body: unknown): ReceivedCall[] {
  const batch = (body as { batch?: unknown } | undefined)?.batch;
  return Array.isArray(batch) ? (batch as ReceivedCall[]) : [];
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

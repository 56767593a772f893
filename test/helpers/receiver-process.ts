import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/** A request the receiver saw: when its body was complete (epoch ms) and its messageId. */
export interface Arrival {
  readonly at: number;
  readonly messageId?: string;
}

/**
 * The receiver's program: answers 200 to every POST and records each body's arrival;
 * `GET /received` answers the list. Prints `{"port":…}` once it listens.
 */
const PROGRAM = `
const http = require('node:http');
const received = [];
const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(received));
    return;
  }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const at = Date.now();
    let messageId;
    try { messageId = JSON.parse(Buffer.concat(chunks).toString()).messageId; } catch {}
    received.push({ at, messageId });
    res.end('ok');
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/**
 * A webhook receiver in a process of its own, so that the times it records are not held back
 * by the work of the test's own process (where ingest and the router may run).
 */
export class ReceiverProcess {
  private child?: ChildProcess;
  private port = 0;

  async start(): Promise<this> {
    const child = spawn(process.execPath, ['-e', PROGRAM], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.child = child;
    const lines = createInterface({ input: child.stdout });
    const [line] = (await once(lines, 'line')) as [string];
    lines.close();
    this.port = (JSON.parse(line) as { port: number }).port;
    return this;
  }

  url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Every request received so far, in arrival order. */
  async received(): Promise<Arrival[]> {
    const res = await fetch(`http://127.0.0.1:${this.port}/received`);
    return (await res.json()) as Arrival[];
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
}

/**
 * The load tool of the ingest benchmark: an HTTP/1.1 client over raw keep-alive sockets, one
 * request in flight per connection, prebuilt request bytes. Both sides of a comparison are
 * driven by this same code with the same connections.
 *
 * Closed loop (no `ratePerSecond`): each connection sends its next request as soon as the
 * answer arrives, so the count is the server's maximum. Open loop (`ratePerSecond`): requests
 * fall due at that overall rate and wait for a free connection; latency runs from the moment
 * a request fell due, so waiting for a connection counts (no coordinated omission).
 *
 * Run as a child process: `node bench/load.mts`, the {@link LoadSpec} as JSON on stdin. Prints
 * `{"event":"window-start"}` and `{"event":"window-end"}` when the measured window opens and
 * closes (the caller samples server CPU then), then one {@link LoadResult} line.
 */
import { connect, type Socket } from 'node:net';
import { createHistogram, performance } from 'node:perf_hooks';

/** What to send, how hard, for how long. */
export interface LoadSpec {
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Request bodies, sent in turn (one is enough). */
  readonly bodies: readonly string[];
  readonly connections: number;
  /** Load before the measured window; not counted. */
  readonly warmupMs: number;
  readonly durationMs: number;
  /** Open loop at this overall rate; closed loop when absent. */
  readonly ratePerSecond?: number;
  /** A 200 whose body differs is counted as unexpected. */
  readonly expectBody?: string;
}

/** What happened in the measured window. */
export interface LoadResult {
  /** Answers with status 200 (and the expected body) that completed in the window. */
  readonly ok: number;
  readonly okPerSecond: number;
  /** Answers with another status or body. */
  readonly unexpected: number;
  /** Connections that failed or closed with a request in flight. */
  readonly errors: number;
  readonly latencyMs: {
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  };
  /** CPU this load process used in the window, in seconds. */
  readonly clientCpuSeconds: number;
  readonly windowSeconds: number;
  /** Most requests that waited for a free connection at once (open loop). */
  readonly backlogMax: number;
  /** The first unexpected answer's head, for diagnosis. */
  readonly firstUnexpected?: string;
}

/** Longest wait for answers still in flight after the window. */
const DRAIN_MS = 5_000;
/** How often the open-loop scheduler looks at the clock. */
const TICK_MS = 1;
const HEADER_END = Buffer.from('\r\n\r\n');

interface Connection {
  socket: Socket;
  pending: Buffer;
  /** Where the current answer ends in `pending`, once its head is parsed; -1 before. */
  answerEnd: number;
  bodyStart: number;
  status: number;
  /** When the request in flight fell due (ms, performance clock); undefined when idle. */
  dueAt: number | undefined;
}

class LoadRun {
  private readonly requests: Buffer[];
  private readonly expectBody?: Buffer;
  private readonly histogram = createHistogram({ lowest: 1, highest: 120_000_000, figures: 3 });
  private readonly connections: Connection[] = [];
  private readonly idle: Connection[] = [];
  private readonly backlog: number[] = [];
  private next = 0;
  private ok = 0;
  private unexpected = 0;
  private errors = 0;
  private backlogMax = 0;
  private firstUnexpected?: string;
  private sending = true;
  private windowStart = Infinity;
  private windowEnd = Infinity;

  private readonly spec: LoadSpec;

  constructor(spec: LoadSpec) {
    this.spec = spec;
    this.requests = spec.bodies.map((body) => requestBytes(spec, body));
    if (spec.expectBody !== undefined) this.expectBody = Buffer.from(spec.expectBody);
  }

  async run(): Promise<LoadResult> {
    await Promise.all(Array.from({ length: this.spec.connections }, () => this.open()));
    const start = performance.now();
    this.windowStart = start + this.spec.warmupMs;
    this.windowEnd = this.windowStart + this.spec.durationMs;
    const stopTicks = this.spec.ratePerSecond
      ? this.scheduleOpenLoop(start)
      : this.startClosedLoop();
    await sleep(this.spec.warmupMs);
    emit({ event: 'window-start' });
    const cpuStart = process.cpuUsage();
    await sleep(this.windowEnd - performance.now());
    const cpu = process.cpuUsage(cpuStart);
    emit({ event: 'window-end' });
    this.sending = false;
    stopTicks();
    await this.drain();
    return this.result((cpu.user + cpu.system) / 1e6);
  }

  private startClosedLoop(): () => void {
    for (const connection of this.connections) this.send(connection, performance.now());
    return () => undefined;
  }

  private scheduleOpenLoop(start: number): () => void {
    const perMs = (this.spec.ratePerSecond ?? 0) / 1000;
    let issued = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      const due = Math.floor((now - start) * perMs);
      for (; issued < due; issued += 1) this.backlog.push(now);
      this.backlogMax = Math.max(this.backlogMax, this.backlog.length);
      while (this.backlog.length > 0 && this.idle.length > 0) {
        this.send(this.idle.pop() as Connection, this.backlog.shift() as number);
      }
    }, TICK_MS);
    return () => clearInterval(timer);
  }

  private open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: this.spec.host, port: this.spec.port, noDelay: true });
      const connection: Connection = {
        socket,
        pending: Buffer.alloc(0),
        answerEnd: -1,
        bodyStart: 0,
        status: 0,
        dueAt: undefined,
      };
      socket.once('connect', () => {
        this.connections.push(connection);
        this.idle.push(connection);
        resolve();
      });
      socket.once('error', reject);
      socket.on('data', (chunk: Buffer) => this.onData(connection, chunk));
      socket.on('close', () => this.onClose(connection));
    });
  }

  private send(connection: Connection, dueAt: number): void {
    const index = this.idle.indexOf(connection);
    if (index !== -1) this.idle.splice(index, 1);
    connection.dueAt = dueAt;
    connection.socket.write(this.requests[this.next]);
    this.next = (this.next + 1) % this.requests.length;
  }

  private onData(connection: Connection, chunk: Buffer): void {
    connection.pending =
      connection.pending.length === 0 ? chunk : Buffer.concat([connection.pending, chunk]);
    while (connection.dueAt !== undefined) {
      if (connection.answerEnd === -1 && !parseHead(connection)) return;
      if (connection.pending.length < connection.answerEnd) return;
      const body = connection.pending.subarray(connection.bodyStart, connection.answerEnd);
      connection.pending = connection.pending.subarray(connection.answerEnd);
      connection.answerEnd = -1;
      this.complete(connection, body);
    }
  }

  private complete(connection: Connection, body: Buffer): void {
    const now = performance.now();
    const dueAt = connection.dueAt as number;
    connection.dueAt = undefined;
    if (now >= this.windowStart && now <= this.windowEnd) {
      const expected =
        connection.status === 200 && (!this.expectBody || this.expectBody.equals(body));
      if (expected) {
        this.ok += 1;
        this.histogram.record(Math.max(1, Math.round((now - dueAt) * 1000)));
      } else {
        this.unexpected += 1;
        this.firstUnexpected ??= `${connection.status} ${body.toString('utf8', 0, 300)}`;
      }
    }
    this.afterAnswer(connection, now);
  }

  private afterAnswer(connection: Connection, now: number): void {
    if (!this.sending) return;
    if (!this.spec.ratePerSecond) return this.send(connection, now);
    const dueAt = this.backlog.shift();
    if (dueAt === undefined) this.idle.push(connection);
    else this.send(connection, dueAt);
  }

  private onClose(connection: Connection): void {
    const index = this.connections.indexOf(connection);
    if (index !== -1) this.connections.splice(index, 1);
    const idleIndex = this.idle.indexOf(connection);
    if (idleIndex !== -1) this.idle.splice(idleIndex, 1);
    if (!this.sending) return;
    this.errors += 1;
    // The server closed a connection: open another so the concurrency stays the same.
    setTimeout(() => {
      this.open()
        .then(() => {
          const fresh = this.connections[this.connections.length - 1];
          this.afterAnswer(fresh, performance.now());
        })
        .catch(() => (this.errors += 1));
    }, 50);
  }

  private async drain(): Promise<void> {
    const deadline = performance.now() + DRAIN_MS;
    while (this.connections.some((c) => c.dueAt !== undefined) && performance.now() < deadline) {
      await sleep(10);
    }
    for (const connection of [...this.connections]) connection.socket.destroy();
  }

  private result(clientCpuSeconds: number): LoadResult {
    const windowSeconds = this.spec.durationMs / 1000;
    const ms = (percentile: number) => round(this.histogram.percentile(percentile) / 1000);
    return {
      ok: this.ok,
      okPerSecond: this.ok / windowSeconds,
      unexpected: this.unexpected,
      errors: this.errors,
      latencyMs:
        this.ok === 0
          ? { p50: NaN, p90: NaN, p99: NaN, max: NaN }
          : { p50: ms(50), p90: ms(90), p99: ms(99), max: round(this.histogram.max / 1000) },
      clientCpuSeconds,
      windowSeconds,
      backlogMax: this.backlogMax,
      firstUnexpected: this.firstUnexpected,
    };
  }
}

/** Parses a complete answer head in `pending`; false while it is still incomplete. */
function parseHead(connection: Connection): boolean {
  const end = connection.pending.indexOf(HEADER_END);
  if (end === -1) return false;
  const head = connection.pending.toString('latin1', 0, end);
  const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
  if (!length) throw new Error(`an answer without Content-Length: ${head.slice(0, 200)}`);
  connection.status = Number(head.slice(9, 12));
  connection.bodyStart = end + HEADER_END.length;
  connection.answerEnd = connection.bodyStart + Number(length[1]);
  return true;
}

function requestBytes(spec: LoadSpec, body: string): Buffer {
  const payload = Buffer.from(body);
  const headers = {
    Host: `${spec.host}:${spec.port}`,
    ...spec.headers,
    'Content-Length': String(payload.length),
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return Buffer.concat([Buffer.from(`POST ${spec.path} HTTP/1.1\r\n${head}\r\n`), payload]);
}

function emit(line: object): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

if (import.meta.main) {
  readStdin()
    .then((text) => new LoadRun(JSON.parse(text) as LoadSpec).run())
    .then((result) => {
      emit(result);
      process.exit(0);
    })
    .catch((error: unknown) => {
      process.stderr.write(`load: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
}

/**
 * Child processes of the benchmark: started, watched and always stopped (also on Ctrl-C), and
 * the CPU each one uses, read from /proc.
 */
import { type ChildProcess, execFileSync, spawn, type SpawnOptions } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';

/** Lines of a child's output kept for an error message. */
const TAIL_LINES = 40;
/**
 * Where every line each child prints also goes, a file per child (`<name>.<pid>.log`), when
 * set: the output of V8's tracing flags given through BENCH_NODE_ARGS, for one.
 */
const CHILD_LOG_DIR = process.env.BENCH_CHILD_LOG_DIR;
/**
 * Longest wait for a child to stop after SIGTERM before SIGKILL: longer than the apps' own
 * SHUTDOWN_TIMEOUT_MS (15 s), so that a slow stop ends, and logs, by the app's own timer.
 */
const STOP_TIMEOUT_MS = 20_000;

/** A started child process and the last lines it printed. */
export class Managed {
  readonly tail: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly lineListeners: ((line: string) => void)[] = [];
  private readonly errorLineListeners: ((line: string) => void)[] = [];
  private done = false;
  /** Where its lines also go (with BENCH_CHILD_LOG_DIR). */
  private readonly logFile: string | undefined;

  readonly name: string;
  readonly child: ChildProcess;

  constructor(name: string, child: ChildProcess) {
    this.name = name;
    this.child = child;
    const file = `${name.replace(/[^\w.-]+/g, '-')}.${child.pid ?? 'unstarted'}.log`;
    this.logFile = CHILD_LOG_DIR ? join(CHILD_LOG_DIR, file) : undefined;
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.done = true;
        resolve(code ?? (signal ? null : 0));
      }),
    );
    // Both streams are always read: a child blocked on a full pipe would skew the numbers.
    if (child.stderr) {
      createInterface({ input: child.stderr }).on('line', (line) => {
        this.keep(line);
        for (const listener of this.errorLineListeners) listener(line);
      });
    }
    if (child.stdout) {
      createInterface({ input: child.stdout }).on('line', (line) => {
        this.keep(line);
        for (const listener of this.lineListeners) listener(line);
      });
    }
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return !this.done;
  }

  /** Calls `listener` with every line the child prints on stdout from now on. */
  onLine(listener: (line: string) => void): void {
    this.lineListeners.push(listener);
  }

  /** Calls `listener` with every line the child prints on stderr from now on. */
  onErrorLine(listener: (line: string) => void): void {
    this.errorLineListeners.push(listener);
  }

  private keep(line: string): void {
    if (this.logFile) appendFileSync(this.logFile, `${line}\n`);
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
  }

  describeExit(): string {
    return `${this.name} (pid ${this.pid}) stopped; its last output:\n  ${this.tail.join('\n  ')}`;
  }
}

/** Starts children and stops every one still running, in order, when asked or on exit. */
export class Supervisor {
  private readonly children: Managed[] = [];

  spawn(name: string, command: string, args: readonly string[], options: SpawnOptions): Managed {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    const managed = new Managed(name, child);
    this.children.push(managed);
    void managed.exited.then(() => this.children.splice(this.children.indexOf(managed), 1));
    return managed;
  }

  /** SIGTERM, then SIGKILL after a grace period. */
  async stop(managed: Managed): Promise<void> {
    if (!managed.running) return;
    managed.child.kill('SIGTERM');
    const timer = setTimeout(() => managed.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await managed.exited;
    clearTimeout(timer);
  }

  async stopAll(): Promise<void> {
    for (const managed of [...this.children].reverse()) await this.stop(managed);
  }

  /** For the process's `exit` event, where nothing can be awaited. */
  killAllNow(): void {
    for (const managed of this.children) if (managed.running) managed.child.kill('SIGKILL');
  }
}

let clockTicks: number | undefined;

function ticksPerSecond(): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  return clockTicks;
}

/**
 * CPU seconds the whole machine was busy so far, all cores and processes (and the kernel's
 * own work) together; undefined when unknown. Shows what else ran on a shared machine.
 */
export function machineBusySeconds(): number | undefined {
  return machineSeconds()?.busy;
}

/**
 * From one read of /proc/stat: the seconds of {@link machineBusySeconds}, and `steal`, the CPU
 * seconds the hypervisor gave to other machines while this one wanted them, all cores
 * together; undefined when unknown. A virtual machine whose neighbours are busy runs
 * everything slower, in bursts no run of ours controls: rounds with steal are the ones to
 * doubt.
 */
export function machineSeconds(): { busy: number; steal: number } | undefined {
  const times = cpuTimes();
  if (times === undefined) return undefined;
  const { user, nice, system, irq, softirq, steal } = times;
  const perSecond = ticksPerSecond();
  return {
    busy: (user + nice + system + irq + softirq + steal) / perSecond,
    steal: steal / perSecond,
  };
}

/** What the reports' `stolen` column is. */
export const STOLEN_MEANS =
  "stolen = the hypervisor's steal time: CPU the machine wanted and other machines got";

/** The first line of /proc/stat (all cores), in clock ticks; undefined when unreadable. */
function cpuTimes():
  Record<'user' | 'nice' | 'system' | 'irq' | 'softirq' | 'steal', number> | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    // cpu user nice system idle iowait irq softirq steal ...
    const [user, nice, system, , , irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return { user, nice, system, irq, softirq, steal };
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds (user + system, all threads) a process used so far; undefined when unknown. Also
 * one thread's, given as `<pid>/task/<tid>`.
 */
export function cpuSeconds(pid: number | string | undefined): number | undefined {
  if (pid === undefined || (typeof pid === 'number' && pid <= 0)) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

/** A port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** Polls `url` until it answers 200, the process dies, or the deadline passes. */
export async function waitForHttp(url: string, managed: Managed, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!managed.running) throw new Error(managed.describeExit());
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`${managed.name} did not answer ${url} within ${timeoutMs} ms`);
}

/** Resolves with the first stdout line of a child that parses as JSON. */
export function firstJsonLine(managed: Managed, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${managed.name} printed nothing`)), timeoutMs);
    void managed.exited.then(() => reject(new Error(managed.describeExit())));
    let found = false;
    managed.onLine((line) => {
      if (found || !line.startsWith('{')) return;
      found = true;
      clearTimeout(timer);
      resolve(JSON.parse(line));
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * One measured run: the load tool against a server, or ProducerPerformance against Kafka,
 * turned into a {@link Sample} with the CPU each process used in the measured window.
 */
import type { LoadResult, LoadSpec } from './load.mts';
import { cpuSeconds, machineSeconds, type Supervisor } from './processes.mts';
import type { Sample } from './report.mts';
import type { Target } from './stand.mts';

const LOAD_TOOL = 'bench/load.mts';

/** What one load run sends; the rest of the spec comes from the target. */
export interface LoadPlan {
  readonly path: string;
  readonly bodies: readonly string[];
  /** Events in one request (calls of a batch; 1 for a single call). */
  readonly eventsPerRequest: number;
  readonly connections: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly ratePerSecond?: number;
  /** The body's Content-Type; `application/json` when absent. */
  readonly contentType?: string;
  /** Headers sent besides Authorization and Content-Type (a browser's Origin, say). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A run's sample plus what went wrong in it, if anything. */
export interface LoadOutcome {
  readonly sample: Sample;
  /** Unexpected answers or connection errors, for a warning. */
  readonly problem?: string;
  /** The measured window's start and end, wall-clock epoch ms. */
  readonly window: { readonly from: number; readonly to: number };
}

interface Mark {
  readonly at: number;
  /** Wall-clock epoch ms, as a process's other reports have it. */
  readonly wallAt: number;
  readonly server?: number;
  readonly broker?: number;
  readonly machine?: number;
  readonly steal?: number;
}

interface Window {
  start?: Mark;
  end?: Mark;
  result?: LoadResult;
}

/** Drives `target` with the load tool in its own process; resolves when it is done. */
export async function runLoad(
  supervisor: Supervisor,
  target: Target,
  plan: LoadPlan,
  writeKey: string,
  brokerPid: number | undefined,
): Promise<LoadOutcome> {
  const spec: LoadSpec = {
    host: '127.0.0.1',
    port: target.port,
    path: plan.path,
    headers: {
      Authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
      'Content-Type': plan.contentType ?? 'application/json',
      ...plan.headers,
    },
    bodies: plan.bodies,
    connections: plan.connections,
    warmupMs: plan.warmupMs,
    durationMs: plan.durationMs,
    ratePerSecond: plan.ratePerSecond,
    expectBody: '{"success":true}',
  };
  const load = supervisor.spawn('load tool', process.execPath, [LOAD_TOOL], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const window: Window = {};
  const mark = (): Mark => {
    const machine = machineSeconds();
    return {
      at: performance.now(),
      wallAt: Date.now(),
      server: cpuSeconds(target.pid),
      broker: cpuSeconds(brokerPid),
      machine: machine?.busy,
      steal: machine?.steal,
    };
  };
  load.onLine((line) => {
    if (!line.startsWith('{')) return;
    const message = JSON.parse(line) as { event?: string } & LoadResult;
    if (message.event === 'window-start') window.start = mark();
    else if (message.event === 'window-end') window.end = mark();
    else window.result = message;
  });
  load.child.stdin?.end(JSON.stringify(spec));
  const code = await load.exited;
  if (code !== 0 || !window.result || !window.start || !window.end) {
    throw new Error(load.describeExit());
  }
  return outcome(window.result, window.start, window.end, plan.eventsPerRequest);
}

function outcome(
  result: LoadResult,
  start: Mark,
  end: Mark,
  eventsPerRequest: number,
): LoadOutcome {
  const seconds = (end.at - start.at) / 1000;
  const cores = (from?: number, to?: number) =>
    from === undefined || to === undefined ? undefined : (to - from) / seconds;
  const serverCores = cores(start.server, end.server);
  const events = result.ok * eventsPerRequest;
  const sample: Sample = {
    value: result.okPerSecond * eventsPerRequest,
    p50Ms: result.latencyMs.p50,
    p99Ms: result.latencyMs.p99,
    serverCores,
    brokerCores: cores(start.broker, end.broker),
    clientCores: result.clientCpuSeconds / result.windowSeconds,
    machineCores: cores(start.machine, end.machine),
    stealCores: cores(start.steal, end.steal),
    serverCpuUs:
      serverCores === undefined || events === 0
        ? undefined
        : ((serverCores * seconds) / events) * 1e6,
  };
  const problems = [
    result.unexpected > 0
      ? `${result.unexpected} unexpected answers (first: ${result.firstUnexpected})`
      : '',
    result.errors > 0 ? `${result.errors} connection errors` : '',
  ].filter(Boolean);
  return {
    sample,
    problem: problems.length > 0 ? problems.join('; ') : undefined,
    window: { from: start.wallAt, to: end.wallAt },
  };
}

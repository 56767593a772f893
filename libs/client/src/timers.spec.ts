import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { Receiver } from '../test/receiver';
import { Timers } from './timers';

/** Longest a child may run before the test fails: far below the waits it was given. */
const CHILD_DEADLINE_MS = 15_000;

interface ChildRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/**
 * Runs `body` in a fresh Node process with `Analytics` from this package's sources (compiled
 * on the fly by SWC, as Jest does), so that the process's own exit can be watched.
 */
function runChild(body: string): Promise<ChildRun> {
  const prelude = `
    const fs = require('node:fs');
    const swc = require(${JSON.stringify(require.resolve('@swc/core'))});
    require.extensions['.ts'] = (module, filename) => module._compile(
      swc.transformSync(fs.readFileSync(filename, 'utf8'), {
        filename, swcrc: false,
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs' },
      }).code, filename);
    const { Analytics } = require(${JSON.stringify(join(__dirname, 'index.ts'))});
  `;
  const started = Date.now();
  const child = spawn(process.execPath, ['-e', `${prelude}\n${body}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DEBUG: '' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), CHILD_DEADLINE_MS);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    }),
  );
}

describe('the process the client runs in', () => {
  let receiver: Receiver;

  jest.setTimeout(CHILD_DEADLINE_MS + 5_000);

  beforeEach(async () => {
    receiver = await new Receiver().start();
  });

  afterEach(() => receiver.stop());

  const options = (extra: string) =>
    `{ writeKey: 'wk', endpoint: ${JSON.stringify(receiver.url)}, ${extra} }`;

  it('is not kept alive by a queued call waiting for its flush timer', async () => {
    const run = await runChild(`
      const analytics = new Analytics(${options('flushAt: 100, flushAfterMs: 600000')});
      analytics.track({ userId: 'u', event: 'E' });
      console.log('queued', analytics.queuedCalls);
    `);
    expect(run).toMatchObject({ code: 0, stdout: 'queued 1\n' });
    expect(run.ms).toBeLessThan(CHILD_DEADLINE_MS);
    expect(receiver.requests).toHaveLength(0);
  });

  it('is not kept alive by a background retry wait', async () => {
    receiver.respond = () => ({ status: 503 });
    const run = await runChild(`
      const analytics = new Analytics(${options(
        'flushAt: 1, retryMinDelayMs: 600000, retryMaxDelayMs: 600000, onError: () => {}',
      )});
      analytics.track({ userId: 'u', event: 'E' });
    `);
    expect(run.code).toBe(0);
    expect(run.ms).toBeLessThan(CHILD_DEADLINE_MS);
    expect(receiver.requests).toHaveLength(1);
  });

  it('delivers a short-lived program’s call with flushAt 1, the request keeping it alive', async () => {
    receiver.respond = () => ({ status: 200, body: { success: true }, delayMs: 300 });
    const run = await runChild(`
      const analytics = new Analytics(${options('flushAt: 1')});
      analytics.track({ userId: 'u', event: 'Signed Up' });
    `);
    expect(run.code).toBe(0);
    expect(receiver.calls()).toEqual([expect.objectContaining({ event: 'Signed Up' })]);
  });

  it('is kept alive by close() until the queue is drained, retry waits included', async () => {
    receiver.respond = (_request, n) => (n === 0 ? { status: 503 } : { status: 200 });
    // The first answer (503) comes long before close(): its retry wait began unheld.
    const run = await runChild(`
      const analytics = new Analytics(${options(
        'flushAt: 1, retryMinDelayMs: 1000, retryMaxDelayMs: 1000',
      )});
      analytics.track({ userId: 'u', event: 'A' });
      setTimeout(() => {
        analytics.track({ userId: 'u', event: 'B' });
        analytics.close().then(() => console.log('closed'));
      }, 300);
    `);
    expect(run).toMatchObject({ code: 0, stdout: 'closed\n', stderr: '' });
    expect(receiver.calls().map((c) => c.event)).toEqual(['A', 'B', 'A']);
    expect(receiver.requests[2].at - receiver.requests[0].at).toBeGreaterThanOrEqual(450);
  });
});

describe(Timers.name, () => {
  it('refs the waits while held, and unrefs them when released', async () => {
    const timers = new Timers();
    const spy = jest.spyOn(global, 'setTimeout');
    const sleeping = timers.sleep(20);
    const timer = spy.mock.results[0].value as NodeJS.Timeout;
    spy.mockRestore();
    expect(timer.hasRef()).toBe(false);
    const release = timers.hold();
    expect(timer.hasRef()).toBe(true);
    release();
    release(); // twice is once
    expect(timer.hasRef()).toBe(false);
    await sleeping;
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { ROOT } from '../../helpers/build';

const run = promisify(execFile);

/** What bench/chaos/chaos.mts writes to CHAOS_JSON (the fields checked here). */
interface ChaosReport {
  faults: {
    id: string;
    acknowledged: number;
    delivered: number;
    lost: number;
    duplicates: number;
    flowingAgainSeconds: number | null;
  }[];
  badSignatures: number;
  unacknowledged: number;
}

/**
 * The chaos suite's short variant (`CHAOS_FAULTS=short`): the dispatcher killed with SIGKILL
 * and started again, then the suite's broker stopped and started again, under an open-loop
 * load. Nothing acknowledged is lost, deliveries of new calls flow again after each fault, and
 * every arrival carries a valid signature. Duplicates are allowed (at least once: a killed
 * dispatcher and a broker restart replay what was not committed); the suite prints them.
 */
describe('chaos suite, short variant', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-chaos-short-'));

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(
    'loses nothing through a SIGKILL of the dispatcher and a broker restart',
    async () => {
      const json = join(dir, 'report.json');
      // Node 24 from the devDependency: it runs the suite's .mts files by stripping their types.
      await run(
        join(ROOT, 'node_modules', '.bin', 'node'),
        ['--disable-warning=TimeoutNegativeWarning', join(ROOT, 'bench', 'chaos', 'chaos.mts')],
        {
          cwd: ROOT,
          timeout: 9 * 60_000,
          maxBuffer: 16 * 1024 * 1024,
          env: {
            ...process.env,
            CHAOS_FAULTS: 'short',
            CHAOS_RATE: '50',
            CHAOS_BROKER_DOWN_SECONDS: '5',
            CHAOS_JSON: json,
          },
        },
      );
      const report = JSON.parse(readFileSync(json, 'utf8')) as ChaosReport;
      expect(report.faults.map((f) => f.id)).toEqual(['kill-dispatcher', 'broker']);
      for (const fault of report.faults) {
        expect(fault.acknowledged).toBeGreaterThan(0);
        expect({ id: fault.id, lost: fault.lost }).toEqual({ id: fault.id, lost: 0 });
        expect(fault.delivered).toBe(fault.acknowledged);
        expect(fault.flowingAgainSeconds).not.toBeNull();
      }
      expect(report.badSignatures).toBe(0);
      expect(report.unacknowledged).toBe(0);
    },
    10 * 60_000,
  );
});

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Metrics, packageVersion } from './metrics';

describe(Metrics.name, () => {
  it('exposes sluice_build_info = 1 with the app and the version', async () => {
    const { body } = await new Metrics('router', '9.8.7').text();
    expect(body).toContain('# TYPE sluice_build_info gauge');
    expect(body).toMatch(/^sluice_build_info\{version="9\.8\.7",app="router"\} 1$/m);
  });

  it("labels it with the project's package.json version by default", async () => {
    // Read here independently of the code under test: the repository's own package.json.
    const manifest = readFileSync(join(__dirname, '../../../package.json'), 'utf8');
    const { version } = JSON.parse(manifest) as { version: string };
    const { body } = await new Metrics('ingest').text();
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(body).toContain(`sluice_build_info{version="${version}",app="ingest"} 1`);
  });
});

describe(packageVersion.name, () => {
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'sluice-version-'));
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("finds the project's package.json above dist/, skipping other packages' files", () => {
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'sluice', version: '1.2.3' }));
    const deep = join(root, 'dist/libs/observability/src');
    mkdirSync(deep, { recursive: true });
    writeFileSync(join(root, 'dist/package.json'), JSON.stringify({ name: 'other', version: '0' }));
    expect(packageVersion(deep)).toBe('1.2.3');
  });

  it('is unknown without one', () => {
    // tmpdir() holds no project package.json up to the root on these machines.
    expect(packageVersion(root)).toBe('unknown');
  });
});

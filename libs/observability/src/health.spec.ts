import { readiness } from './health';

describe(readiness.name, () => {
  it('is ready when every check resolves', async () => {
    const result = await readiness(
      [
        { name: 'kafka', check: async () => undefined },
        { name: 'postgres', check: async () => undefined },
      ],
      100,
      () => undefined,
    );
    expect(result).toEqual({
      ready: true,
      degraded: false,
      checks: { kafka: 'up', postgres: 'up' },
    });
  });

  it('is not ready when a check fails, and reports the failure only to the callback', async () => {
    const failures: string[] = [];
    const result = await readiness(
      [
        { name: 'kafka', check: async () => undefined },
        {
          name: 'postgres',
          check: () => Promise.reject(new Error('password authentication failed')),
        },
      ],
      100,
      (name) => failures.push(name),
    );
    expect(result).toEqual({
      ready: false,
      degraded: false,
      checks: { kafka: 'up', postgres: 'down' },
    });
    expect(JSON.stringify(result)).not.toContain('password');
    expect(failures).toEqual(['postgres']);
  });

  it('stays ready, degraded, when only a check that is not required fails', async () => {
    const result = await readiness(
      [
        { name: 'kafka', check: async () => undefined },
        { name: 'postgres', required: false, check: () => Promise.reject(new Error('down')) },
      ],
      100,
      () => undefined,
    );
    expect(result).toEqual({
      ready: true,
      degraded: true,
      checks: { kafka: 'up', postgres: 'down' },
    });
  });

  it('is not ready when a required check fails beside one that is not required', async () => {
    const result = await readiness(
      [
        { name: 'consumers', check: () => Promise.reject(new Error('joining')) },
        { name: 'postgres', required: false, check: () => Promise.reject(new Error('down')) },
      ],
      100,
      () => undefined,
    );
    expect(result).toMatchObject({ ready: false, degraded: false });
  });

  it('counts a check that does not answer in time as down', async () => {
    const result = await readiness(
      [{ name: 'kafka', check: () => new Promise<void>(() => undefined) }],
      20,
      () => undefined,
    );
    expect(result.checks.kafka).toBe('down');
  });
});

import { DestinationGate } from './destination-gate';

/** Whether a promise settled by the time pending callbacks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe(DestinationGate.name, () => {
  it('bounds the deliveries in flight per destination', async () => {
    const gate = new DestinationGate(2);
    await gate.acquire('d-1');
    await gate.acquire('d-1');
    const third = gate.acquire('d-1');
    expect(await settled(third)).toBe(false);
    // Another destination is not held up.
    expect(await settled(gate.acquire('d-2'))).toBe(true);
    gate.release('d-1', 0);
    expect(await settled(third)).toBe(true);
    const fourth = gate.acquire('d-1');
    expect(await settled(fourth)).toBe(false);
    gate.release('d-1', 0);
    await expect(fourth).resolves.toBeUndefined();
  });

  it('ignores the release of a destination never acquired', () => {
    const gate = new DestinationGate(1);
    expect(() => gate.release('unknown', 0)).not.toThrow();
  });

  it('counts a destination at its bound stalled from its last free slot taken or delivery finished', () => {
    const gate = new DestinationGate(2);
    expect(gate.stalledMs('d-1', 1_000)).toBe(0);
    expect(gate.tryAcquire('d-1', 1_000)).toBe(true);
    expect(gate.tryAcquire('d-1', 1_100)).toBe(true);
    expect(gate.tryAcquire('d-1', 1_700)).toBe(false);
    expect(gate.stalledMs('d-1', 1_700)).toBe(600);
    gate.release('d-1', 1_800);
    expect(gate.stalledMs('d-1', 1_900)).toBe(100);
    expect(gate.stalledMs('d-2', 1_900)).toBe(0);
  });
});

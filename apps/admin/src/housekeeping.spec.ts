import { SyncsService } from './audiences/syncs.service';
import { Clock } from './clock';
import { DeletionsService } from './deletions/deletions.service';
import { Housekeeping, republishAfterMs } from './housekeeping';

const NOW = Date.parse('2026-11-25T12:00:00.000Z');
const clock: Clock = { now: () => NOW, newId: () => 'id' };

function housekeeping(
  publishUnpublished: (cutoff: Date) => Promise<number>,
  expireOpen: (cutoff: Date) => Promise<number> = () => Promise.resolve(0),
): Housekeeping {
  return new Housekeeping(
    { publishUnpublished } as unknown as DeletionsService,
    { expireOpen } as unknown as SyncsService,
    clock,
    { republishAfterMs: 600_000, syncExpiryMs: 86_400_000 },
  );
}

describe(Housekeeping.name, () => {
  it('publishes requests and drops syncs older than their ages, one round at a time', async () => {
    let finish: (n: number) => void = () => undefined;
    const cutoffs: Date[] = [];
    const expired: Date[] = [];
    const house = housekeeping(
      (cutoff) => {
        cutoffs.push(cutoff);
        return new Promise((resolve) => (finish = resolve));
      },
      (cutoff) => {
        expired.push(cutoff);
        return Promise.resolve(3);
      },
    );
    const first = house.run();
    const second = house.run();
    finish(2);
    const round = { republished: 2, expiredSyncs: 3 };
    await expect(Promise.all([first, second])).resolves.toEqual([round, round]);
    expect(cutoffs).toEqual([new Date(NOW - 600_000)]);
    expect(expired).toEqual([new Date(NOW - 86_400_000)]);
    const third = house.run();
    finish(0);
    await expect(third).resolves.toEqual({ republished: 0, expiredSyncs: 3 });
    expect(cutoffs).toHaveLength(2);
  });

  it('counts a failed task as 0, still runs the other, and tries again next round', async () => {
    const publish = jest
      .fn<Promise<number>, [Date]>()
      .mockRejectedValueOnce(new Error('Kafka is down'))
      .mockResolvedValueOnce(1);
    const house = housekeeping(publish, () => Promise.resolve(1));
    await expect(house.run()).resolves.toEqual({ republished: 0, expiredSyncs: 1 });
    await expect(house.run()).resolves.toEqual({ republished: 1, expiredSyncs: 1 });
  });

  it('republishes after ten minutes, or three produce timeouts when that is longer', () => {
    expect(republishAfterMs(30_000)).toBe(600_000);
    expect(republishAfterMs(300_000)).toBe(900_000);
  });
});

import { Clock } from '../clock';
import { DeletionsService } from './deletions.service';
import { republishAfterMs, UnpublishedDeletions } from './unpublished-deletions';

const NOW = Date.parse('2026-11-25T12:00:00.000Z');
const clock: Clock = { now: () => NOW, newId: () => 'id' };

function checker(publishUnpublished: (cutoff: Date) => Promise<number>): UnpublishedDeletions {
  const deletions = { publishUnpublished } as unknown as DeletionsService;
  return new UnpublishedDeletions(deletions, clock, { afterMs: 600_000 });
}

describe(UnpublishedDeletions.name, () => {
  it('publishes the requests older than its age, one check at a time', async () => {
    let finish: (n: number) => void = () => undefined;
    const cutoffs: Date[] = [];
    const unpublished = checker((cutoff) => {
      cutoffs.push(cutoff);
      return new Promise((resolve) => (finish = resolve));
    });
    const first = unpublished.check();
    const second = unpublished.check();
    finish(2);
    await expect(Promise.all([first, second])).resolves.toEqual([2, 2]);
    expect(cutoffs).toEqual([new Date(NOW - 600_000)]);
    const third = unpublished.check();
    finish(0);
    await expect(third).resolves.toBe(0);
    expect(cutoffs).toHaveLength(2);
  });

  it('answers 0 when publishing failed, and checks again next time', async () => {
    const publish = jest
      .fn<Promise<number>, [Date]>()
      .mockRejectedValueOnce(new Error('Kafka is down'))
      .mockResolvedValueOnce(1);
    const unpublished = checker(publish);
    await expect(unpublished.check()).resolves.toBe(0);
    await expect(unpublished.check()).resolves.toBe(1);
  });

  it('waits ten minutes, or three produce timeouts when that is longer', () => {
    expect(republishAfterMs(30_000)).toBe(600_000);
    expect(republishAfterMs(300_000)).toBe(900_000);
  });
});

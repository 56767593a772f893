import { HoldStopReason, LaneHold } from './lane-hold';
import { HeldRecord, LaneHolds } from './lane-holds';

/** A hold whose settling and stops the spec controls and sees. */
function hold(maxWaiting: number) {
  let settle!: (answer: unknown) => void;
  const stops: HoldStopReason[] = [];
  const settled = new Promise<unknown>((resolve) => (settle = resolve));
  return { hold: new LaneHold(settled, (reason) => stops.push(reason), maxWaiting), settle, stops };
}

function partition() {
  return { isHeld: true, finished: 0 };
}

function holdsOf(state: { isHeld: boolean; finished: number }, roomWaitMs?: number) {
  return new LaneHolds<HeldRecord>(
    { held: () => state.isHeld, finishedCount: () => state.finished },
    roomWaitMs,
  );
}

describe(LaneHolds.name, () => {
  it('hands a settled hold its answer once, and never one abandoned before', async () => {
    const holds = holdsOf(partition());
    const [a, b] = [hold(5), hold(5)];
    const answers: unknown[] = [];
    holds.add({ offset: 1n, lane: 1 }, a.hold, (answer) => answers.push(answer));
    holds.add({ offset: 2n, lane: 2 }, b.hold, (answer) => answers.push(answer));
    const dropped: bigint[] = [];
    holds.abandon(
      (task) => task.offset > 1n,
      (task) => dropped.push(task.offset),
    );
    expect([dropped, b.stops, holds.size]).toEqual([[2n], ['abandon'], 1]);
    a.settle('done');
    b.settle('late');
    await Promise.resolve();
    expect([answers, holds.size]).toEqual([['done'], 0]);
  });

  it.each([
    [2, 1, []],
    [2, 2, ['pending']],
    [0, 0, ['pending']],
  ])(
    'with %i allowed to wait and %i waiting, asks the hold to stop: %j',
    (maxWaiting, waiting, stops) => {
      const holds = holdsOf(partition());
      const h = hold(maxWaiting);
      holds.add({ offset: 1n, lane: 7 }, h.hold, () => undefined);
      holds.checkWaiting(8, 99);
      holds.checkWaiting(7, waiting);
      holds.checkWaiting(7, waiting);
      expect(h.stops).toEqual(stops);
    },
  );

  describe('with the lines full', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('asks the oldest hold to stop once nothing finished for the room wait, one per wait', () => {
      const state = partition();
      const holds = holdsOf(state, 1_000);
      const [newer, older] = [hold(9), hold(9)];
      holds.add({ offset: 5n, lane: 1 }, newer.hold, () => undefined);
      holds.add({ offset: 3n, lane: 2 }, older.hold, () => undefined);
      holds.watchRoom();
      jest.advanceTimersByTime(999);
      expect(older.stops).toEqual([]);
      jest.advanceTimersByTime(1);
      expect([older.stops, newer.stops]).toEqual([['partition_full'], []]);
      jest.advanceTimersByTime(1_000);
      expect(newer.stops).toEqual(['partition_full']);
    });

    it('asks none while records finish, nor once the partition fetches again', () => {
      const state = partition();
      const holds = holdsOf(state, 1_000);
      const h = hold(9);
      holds.add({ offset: 1n, lane: 1 }, h.hold, () => undefined);
      holds.watchRoom();
      state.finished += 1;
      jest.advanceTimersByTime(1_000);
      state.isHeld = false;
      jest.advanceTimersByTime(5_000);
      holds.watchRoom();
      holds.stopWatching();
      jest.advanceTimersByTime(5_000);
      expect(h.stops).toEqual([]);
    });
  });
});

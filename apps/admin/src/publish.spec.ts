import type { OutgoingRecord } from '@app/kafka';

import { publishAll } from './publish';

const records = (n: number): OutgoingRecord[] =>
  Array.from({ length: n }, (_, i) => ({ topic: 't', value: String(i) }));

describe(publishAll.name, () => {
  it('sends every record once, in chunks', async () => {
    const sent: string[][] = [];
    const producer = {
      send: (chunk: readonly OutgoingRecord[]) => {
        sent.push(chunk.map((r) => r.value as string));
        return Promise.resolve();
      },
    };
    await expect(publishAll(producer, records(25), 10)).resolves.toBeUndefined();
    expect(sent.map((chunk) => chunk.length)).toEqual([10, 10, 5]);
    expect(sent.flat()).toEqual(records(25).map((r) => r.value));
  });

  it('rejects when any chunk is not acknowledged, after the others settled', async () => {
    let settled = 0;
    const producer = {
      send: (chunk: readonly OutgoingRecord[]) =>
        new Promise<void>((resolve, reject) =>
          setTimeout(() => {
            settled += 1;
            if (chunk[0].value === '10') reject(new Error('broker down'));
            else resolve();
          }, 5),
        ),
    };
    await expect(publishAll(producer, records(30), 10)).rejects.toThrow('broker down');
    expect(settled).toBe(3);
  });
});

import { HEADER, TOPIC } from '@app/contracts';

import { deleteRecord } from './delete-notification';

describe(deleteRecord.name, () => {
  const record = deleteRecord(
    { id: 'n-1', sourceId: 's-1', destinationId: 'd-1', userId: 'user "1"' },
    '2026-11-22T04:00:00.000Z',
  );

  it('is keyed and headed like a call of the source, with the notification id and its destination', () => {
    expect(record.topic).toBe(TOPIC.calls);
    expect(record.key).toBe('s-1:user "1"');
    expect(record.headers).toEqual({
      [HEADER.sourceId]: 's-1',
      [HEADER.callType]: 'delete',
      [HEADER.messageId]: 'n-1',
      [HEADER.destinationId]: 'd-1',
      [HEADER.userId]: 'user "1"',
    });
  });

  it('carries exactly type, userId and timestamp', () => {
    expect(record.value).toBe(
      '{"type":"delete","userId":"user \\"1\\"","timestamp":"2026-11-22T04:00:00.000Z"}',
    );
  });
});

import { decodeCursor, encodeCursor } from './delivery-cursor';

describe('delivery cursor', () => {
  const cursor = {
    firstAttemptMicros: '1795600000123456',
    id: '0b9d1f2e-3c4a-4b5c-8d6e-7f8091a2b3c4',
  };

  it('round-trips', () => {
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
  });

  it('is opaque and URL-safe', () => {
    expect(encodeCursor(cursor)).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(encodeCursor(cursor)).not.toContain(cursor.id);
  });

  it.each([
    ['empty', ''],
    ['not base64url', 'abc+/='],
    ['no id', Buffer.from('1795600000123456:').toString('base64url')],
    ['not a uuid', Buffer.from(`1795600000123456:${'z'.repeat(36)}`).toString('base64url')],
    ['a negative time', Buffer.from(`-1:${cursor.id}`).toString('base64url')],
    ['a fractional time', Buffer.from(`1.5:${cursor.id}`).toString('base64url')],
    ['a time too large', Buffer.from(`${'9'.repeat(18)}:${cursor.id}`).toString('base64url')],
    ['trailing text', encodeCursor(cursor) + Buffer.from('x').toString('base64url')],
  ])('refuses %s', (_label, text) => {
    expect(decodeCursor(text)).toBeUndefined();
  });
});

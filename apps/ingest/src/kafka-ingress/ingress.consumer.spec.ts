import { MAX_REQUEST_BYTES } from '@app/contracts';

import { rejectedValue } from './ingress.consumer';

describe(rejectedValue.name, () => {
  it('passes bytes without a write key through', () => {
    const value = Buffer.from('not json');
    expect(rejectedValue(value)).toBe(value);
  });

  it('blanks write keys, also in truncated JSON', () => {
    expect(rejectedValue(Buffer.from('{"writeKey" : "abc\\"d", "x":1')).toString()).toBe(
      '{"writeKey" : "[removed]", "x":1',
    );
    expect(rejectedValue(Buffer.from('{"writeKey":"abc')).toString()).toBe(
      '{"writeKey":"[removed]"',
    );
  });

  it('copies nothing of an oversize or empty record', () => {
    expect(rejectedValue(Buffer.alloc(MAX_REQUEST_BYTES + 1))).toHaveLength(0);
    expect(rejectedValue(null)).toHaveLength(0);
  });
});

import { nextReceipt, receiptOf } from './receipt';

describe(receiptOf.name, () => {
  it.each([
    ['delivered', 'delivered'],
    ['dead', 'failed'],
    ['discarded', 'failed'],
  ] as const)('counts %s as %s', (result, receipt) => {
    expect(receiptOf(result)).toBe(receipt);
  });
});

describe(nextReceipt.name, () => {
  it.each([
    ['pending', 'delivered', 'delivered'],
    ['pending', 'dead', 'failed'],
    ['pending', 'discarded', 'failed'],
    ['failed', 'delivered', 'delivered'],
  ] as const)('moves %s on %s to %s', (current, result, next) => {
    expect(nextReceipt(current, result)).toBe(next);
  });

  it.each([
    ['delivered', 'delivered'],
    ['delivered', 'dead'],
    ['delivered', 'discarded'],
    ['failed', 'dead'],
    ['failed', 'discarded'],
  ] as const)('leaves %s as it is on a duplicate or late %s', (current, result) => {
    expect(nextReceipt(current, result)).toBeUndefined();
  });
});

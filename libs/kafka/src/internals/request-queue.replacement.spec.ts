import { KafkajsVersionError } from './kafkajs-version';
import {
  installRequestQueueReplacement,
  scheduleCheckPendingRequests,
} from './request-queue.replacement';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const RequestQueue = require('kafkajs/src/network/requestQueue') as {
  prototype: { scheduleCheckPendingRequests: unknown };
};

function queue(pending: unknown[], throttledUntil = -1) {
  return {
    pending,
    throttledUntil,
    throttleCheckTimeoutId: null as NodeJS.Timeout | null,
    checks: 0,
    checkPendingRequests(): void {
      this.checks += 1;
    },
    scheduleCheckPendingRequests,
  };
}

describe(installRequestQueueReplacement.name, () => {
  it('refuses another kafkajs version and leaves its request queue as it is', () => {
    const own = RequestQueue.prototype.scheduleCheckPendingRequests;
    expect(() => installRequestQueueReplacement('2.3.0')).toThrow(KafkajsVersionError);
    expect(() => installRequestQueueReplacement('2.3.0')).toThrow(
      expect.objectContaining({ code: 'KAFKAJS_VERSION_UNSUPPORTED', found: '2.3.0' }),
    );
    expect(RequestQueue.prototype.scheduleCheckPendingRequests).toBe(own);
    expect(own).not.toBe(scheduleCheckPendingRequests);
  });

  afterEach(() => jest.useRealTimers());

  it('arms no timer when nothing is pending', () => {
    const q = queue([]);
    q.scheduleCheckPendingRequests();
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('checks pending requests after the interval, or when the throttle ends', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const waiting = queue(['request']);
    waiting.scheduleCheckPendingRequests();
    jest.advanceTimersByTime(9);
    expect(waiting.checks).toBe(0);
    jest.advanceTimersByTime(1);
    expect(waiting.checks).toBe(1);
    const throttled = queue(['request'], Date.now() + 250);
    throttled.scheduleCheckPendingRequests();
    jest.advanceTimersByTime(249);
    expect(throttled.checks).toBe(0);
    jest.advanceTimersByTime(1);
    expect(throttled.checks).toBe(1);
  });

  it('replaces the method of the kafkajs class the clients use', () => {
    installRequestQueueReplacement();
    expect(RequestQueue.prototype.scheduleCheckPendingRequests).toBe(scheduleCheckPendingRequests);
  });
});

import { KafkajsVersionError } from './kafkajs-version';
import {
  checkedRequestQueues,
  checkRequestTimeouts,
  installRequestTimeoutReplacement,
  REQUEST_TIMEOUT_CHECK_MS,
} from './request-timeout.replacement';

interface Queue {
  enforceRequestTimeout: boolean;
  requestTimeout: number;
  inflight: Map<number, { sentAt: number; requestTimeout: number; timeoutRequest(): void }>;
  connected: boolean;
  isConnected(): boolean;
  destroy(): void;
  scheduleRequestTimeoutCheck(): void;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const RequestQueue = require('kafkajs/src/network/requestQueue') as {
  prototype: { destroy: (this: Queue) => void; scheduleRequestTimeoutCheck: (this: Queue) => void };
};

function queue(): Queue {
  return {
    enforceRequestTimeout: true,
    requestTimeout: 30_000,
    inflight: new Map(),
    connected: true,
    isConnected() {
      return this.connected;
    },
    destroy: RequestQueue.prototype.destroy,
    scheduleRequestTimeoutCheck: RequestQueue.prototype.scheduleRequestTimeoutCheck,
  };
}

describe(`${installRequestTimeoutReplacement.name} on another kafkajs`, () => {
  it("refuses and leaves kafkajs's own timeout checks in place", () => {
    const { destroy, scheduleRequestTimeoutCheck } = RequestQueue.prototype;
    expect(() => installRequestTimeoutReplacement('2.2.5')).toThrow(KafkajsVersionError);
    expect(() => installRequestTimeoutReplacement('2.2.5')).toThrow(
      expect.objectContaining({ code: 'KAFKAJS_VERSION_UNSUPPORTED', found: '2.2.5' }),
    );
    expect(RequestQueue.prototype.destroy).toBe(destroy);
    expect(RequestQueue.prototype.scheduleRequestTimeoutCheck).toBe(scheduleRequestTimeoutCheck);
    installRequestTimeoutReplacement();
    expect(RequestQueue.prototype.scheduleRequestTimeoutCheck).not.toBe(
      scheduleRequestTimeoutCheck,
    );
  });
});

describe('the request-timeout replacement', () => {
  beforeAll(() => installRequestTimeoutReplacement());
  afterEach(() => jest.useRealTimers());

  it('times out a request past its deadline, and only that one', () => {
    const q = queue();
    q.scheduleRequestTimeoutCheck();
    const late = { sentAt: 1_000, requestTimeout: 500, timeoutRequest: jest.fn() };
    const early = { sentAt: 1_000, requestTimeout: 5_000, timeoutRequest: jest.fn() };
    q.inflight.set(1, late).set(2, early);
    checkRequestTimeouts(1_600);
    expect(late.timeoutRequest).toHaveBeenCalledTimes(1);
    expect(early.timeoutRequest).not.toHaveBeenCalled();
    q.destroy();
  });

  it('checks on one shared timer and forgets a queue once destroyed or disconnected', () => {
    jest.useFakeTimers();
    const before = checkedRequestQueues();
    const a = queue();
    const b = queue();
    a.scheduleRequestTimeoutCheck();
    b.scheduleRequestTimeoutCheck();
    expect(checkedRequestQueues()).toBe(before + 2);
    a.destroy();
    expect(checkedRequestQueues()).toBe(before + 1);
    const request = { sentAt: Date.now(), requestTimeout: 1_500, timeoutRequest: jest.fn() };
    b.inflight.set(1, request);
    jest.advanceTimersByTime(REQUEST_TIMEOUT_CHECK_MS);
    expect(request.timeoutRequest).not.toHaveBeenCalled();
    jest.advanceTimersByTime(REQUEST_TIMEOUT_CHECK_MS);
    expect(request.timeoutRequest).toHaveBeenCalledTimes(1);
    b.connected = false;
    jest.advanceTimersByTime(REQUEST_TIMEOUT_CHECK_MS);
    expect(checkedRequestQueues()).toBe(before);
  });

  it('leaves a queue without enforced timeouts alone', () => {
    const q = queue();
    q.enforceRequestTimeout = false;
    const before = checkedRequestQueues();
    q.scheduleRequestTimeoutCheck();
    expect(checkedRequestQueues()).toBe(before);
  });
});

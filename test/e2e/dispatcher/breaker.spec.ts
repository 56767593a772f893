import { randomUUID } from 'node:crypto';

import { BreakerObserver } from '../../../apps/dispatcher/src/delivery/breaker-observer';
import type { BreakerChange } from '../../../apps/dispatcher/src/delivery/circuit-breaker';
import { HEADER, TOPIC } from '@app/contracts';

import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { callAdmin, startAdminBeside } from '../../helpers/admin-harness';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually } from '../../helpers/services';
import { ReceivedRequest, WebhookReceiver } from '../../helpers/webhook-receiver';

const COOL_DOWN_MS = 2_000;
const PROBES = 1;
const CALLS = 40;
/** One call every this many ms while the receiver is down. */
const PACE_MS = 150;
/** How long the receiver stays down, from the first call. */
const DOWN_MS = 10_000;
/** Longest a call of the healthy destination may take from ingest's answer to its receiver. */
const PROMPT_MS = 1_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The `breaker` field of the admin API's destination. */
interface AdminBreaker {
  readonly state: string;
  readonly since: string | null;
  readonly openReplicas: number;
}

function messageIdOf(request: ReceivedRequest): string {
  return (JSON.parse(request.body.toString('utf8')) as { messageId: string }).messageId;
}

describe('dispatcher and admin API: circuit breaker of a destination whose receiver is down (failing after 3, cool-down 2 s, 1 probe; ladder 1s,2s; window 60 s)', () => {
  const harness = new DispatcherHarness();
  const dead = new WebhookReceiver();
  const live = new WebhookReceiver();
  const changes: BreakerChange[] = [];
  let admin: NestFastifyApplication;
  let adminUrl: string;

  beforeAll(async () => {
    await Promise.all([dead.start(), live.start()]);
    await harness.start({
      DISPATCHER_RETRY_WINDOW_SECONDS: '60',
      DISPATCHER_FAILING_AFTER: '3',
      DISPATCHER_BREAKER_COOL_DOWN_MS: String(COOL_DOWN_MS),
      DISPATCHER_BREAKER_PROBES: String(PROBES),
    });
    admin = await startAdminBeside(harness);
    adminUrl = await admin.getUrl();
    const observer = harness.dispatcher!.get(BreakerObserver);
    const changed = observer.changed.bind(observer);
    observer.changed = (change) => {
      changes.push(change);
      changed(change);
    };
  });

  afterAll(async () => {
    await admin?.close();
    await harness.close();
    await Promise.all([dead.stop(), live.stop()]);
  });

  it('sends the dead receiver at most one probe per cool-down, then every call once; the other destination keeps its pace', async () => {
    const source = await harness.source();
    const deadDestination = await harness.webhookDestination(source.id, {
      name: 'dead-hooks',
      urls: [dead.url()],
    });
    const liveDestination = await harness.webhookDestination(source.id, {
      name: 'live-hooks',
      urls: [live.url()],
    });
    let down = true;
    const answered: { messageId: string; status: number; at: number }[] = [];
    dead.answer = (request) => {
      const status = down ? 503 : 200;
      answered.push({ messageId: messageIdOf(request), status, at: request.at });
      return { status };
    };

    // What the admin API says of the dead destination's breaker, all along.
    const path = `/admin/v1/sources/${source.id}/destinations/${deadDestination.id}`;
    const seen: { at: number; breaker: AdminBreaker }[] = [];
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const answer = await callAdmin(adminUrl, 'GET', path);
        seen.push({ at: Date.now(), breaker: (answer.body as { breaker: AdminBreaker }).breaker });
        await sleep(500);
      }
    })();

    const startedAt = Date.now();
    const sentAt = new Map<string, number>();
    for (let i = 0; i < CALLS; i++) {
      const messageId = randomUUID();
      sentAt.set(messageId, Date.now());
      await harness.track(source.writeKey, messageId);
      await sleep(PACE_MS);
    }
    await sleep(Math.max(startedAt + DOWN_MS - Date.now(), 0));
    down = false;
    const upAt = Date.now();

    // Every call reaches the dead receiver's 2xx once it is back, and nothing is dead-lettered.
    const ids = [...sentAt.keys()];
    const delivered = (): string[] =>
      answered.filter((a) => a.status === 200).map((a) => a.messageId);
    await eventually(
      () => (ids.every((id) => delivered().includes(id)) ? true : undefined),
      30_000,
      'every call at the receiver once it is back',
    );
    await sleep(2 * 2_000); // a tier's delay: a duplicate would have come by now
    expect(delivered().sort()).toEqual([...ids].sort());
    for (const id of ids) {
      expect(harness.outbound.withHeader(TOPIC.deliveriesDead, HEADER.messageId, id)).toEqual([]);
    }

    // While open (from its first opening to its closing) only probes reached the receiver.
    const ours = changes.filter((c) => c.destinationId === deadDestination.id);
    const openedAt = ours.find((c) => c.to === 'open')!.at;
    const closedAt = ours.find((c) => c.to === 'closed')!.at;
    expect(openedAt).toBeLessThan(upAt);
    expect(closedAt).toBeGreaterThanOrEqual(upAt);
    // Times are in ms: a loopback probe can be sent and answered, and the calls queued behind
    // the breaker sent, within the millisecond the breaker closes. So a half-open turn of that
    // millisecond counts (it came before the close), and a request of it does not (it may have
    // come after).
    const whileOpen = dead.requests.filter((r) => r.at > openedAt && r.at < closedAt).length;
    const coolDowns = Math.floor((closedAt - openedAt) / COOL_DOWN_MS) + 1;
    const halfOpens = ours.filter((c) => c.to === 'half_open' && c.at <= closedAt).length;
    console.log(
      `breaker e2e: open ${closedAt - openedAt} ms, ${whileOpen} request(s) at the receiver ` +
        `while open, ${halfOpens} half-open turn(s), bound ${coolDowns * PROBES}; ` +
        `${dead.requests.length} requests in all for ${CALLS} calls`,
    );
    expect(whileOpen).toBeGreaterThanOrEqual(1);
    expect(whileOpen).toBeLessThanOrEqual(halfOpens * PROBES);
    expect(halfOpens).toBeLessThanOrEqual(coolDowns);

    // The admin API showed it open in this one replica while down, and closed since the end.
    await eventually(
      () => (seen.at(-1)?.breaker.state === 'closed' ? true : undefined),
      10_000,
      'the admin API showing the breaker closed',
    );
    watching = false;
    await watch;
    const whileDown = seen.filter((s) => s.at > openedAt + 1_000 && s.at < upAt);
    expect(whileDown.length).toBeGreaterThan(0);
    for (const { breaker } of whileDown) {
      expect(['open', 'half_open']).toContain(breaker.state);
      expect(breaker.openReplicas).toBe(1);
      expect(Date.parse(breaker.since!)).toBe(openedAt);
    }
    const last = seen.at(-1)!.breaker;
    expect(last.openReplicas).toBe(0);
    expect(Date.parse(last.since!)).toBe(closedAt);

    // The other destination of the source got each call once, promptly, all along.
    await live.received(CALLS);
    const liveIds = live.requests.map(messageIdOf);
    expect([...liveIds].sort()).toEqual([...ids].sort());
    const livePath = `/sources/${source.id}/destinations/${liveDestination.id}`;
    const liveAnswer = await callAdmin(adminUrl, 'GET', `/admin/v1${livePath}`);
    expect((liveAnswer.body as { breaker: AdminBreaker }).breaker).toEqual({
      state: 'closed',
      since: null,
      openReplicas: 0,
    });
    const lateness = live.requests.map((r) => r.at - sentAt.get(messageIdOf(r))!);
    console.log(`breaker e2e: healthy destination, slowest call ${Math.max(...lateness)} ms`);
    expect(Math.max(...lateness)).toBeLessThan(PROMPT_MS);
  });
});

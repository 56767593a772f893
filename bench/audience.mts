/**
 * The audience benchmark: the first sync of a 100,000-member audience through the admin
 * app (a child process, as in production): the time to upload the list in pages, the time
 * to commit it (diff, 100,000 identifies published and acknowledged by Kafka with acks=all,
 * membership stored), and identifies/s. The reference, measured in the same run with rounds
 * interleaved: the project's BatchProducer alone sending the same 100,000 records (built by
 * the same function, same size, same chunks and acks) to a topic of the same partitions.
 * The second reference, once the rounds are done: the identifies they published are routed
 * (router child process, not timed) and then delivered by the dispatcher (child process) to
 * a local sink answering 200: its deliveries/s over the first BENCH_MEMBERS deliveries.
 *
 * Run through `npm run bench:audience` (bench/run.sh builds, starts the services, migrates).
 * Settings: BENCH_MEMBERS (100000), BENCH_PAGE_MEMBERS (10000), BENCH_ROUNDS (3),
 * KAFKA_TOPIC_PARTITIONS (6).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

import type { Admin } from 'kafkajs';

import { envReader, progress, removeStand, runBench } from './common.mts';
import { createTopics, kafkaClient } from './kafka.mts';
import {
  cpuSeconds,
  freePort,
  type Managed,
  sleep,
  Supervisor,
  waitForHttp,
} from './processes.mts';
import { count, fixed, median, table } from './report.mts';

const ADMIN_MAIN = 'dist/apps/admin/src/main.js';
const ROUTER_MAIN = 'dist/apps/router/src/main.js';
const DISPATCHER_MAIN = 'dist/apps/dispatcher/src/main.js';
/** Longest wait for the router to route, or the dispatcher to deliver, the reference's records. */
const DRAIN_TIMEOUT_MS = 600_000;
const READY_TIMEOUT_MS = 90_000;
/** The raw reference's logical topic (the run's prefix is added, as for the calls topic). */
const RAW_TOPIC = 'bench.audience-raw.v1';

interface CallRecord {
  readonly topic: string;
  readonly key: string;
  readonly value: string;
  readonly headers: { readonly [name: string]: string };
}
interface Producer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  send(records: readonly CallRecord[]): Promise<void>;
}
interface Built {
  readonly KafkaConnection: new (o: object) => object;
  readonly BatchProducer: new (c: object) => Producer;
  readonly traitIdentifyRecord: (t: object, u: string, v: unknown, s: object) => CallRecord;
  readonly publishAll: (p: Producer, r: readonly CallRecord[]) => Promise<void>;
}

const load = createRequire(import.meta.url);
const built: Built = {
  ...(load('../dist/libs/kafka/src/index.js') as Pick<Built, 'KafkaConnection' | 'BatchProducer'>),
  ...(load('../dist/apps/admin/src/audiences/trait-identify.js') as Pick<
    Built,
    'traitIdentifyRecord'
  >),
  ...(load('../dist/apps/admin/src/publish.js') as Pick<Built, 'publishAll'>),
};

const env = envReader(process.env, 'bench:audience');
const settings = {
  brokers: env.required('KAFKA_BROKERS'),
  databaseUrl: env.required('DATABASE_URL'),
  members: env.number('BENCH_MEMBERS', 100_000, 1, 2_000_000),
  pageMembers: env.number('BENCH_PAGE_MEMBERS', 10_000, 1, 10_000),
  rounds: env.number('BENCH_ROUNDS', 3, 1, 20),
  partitions: env.number('KAFKA_TOPIC_PARTITIONS', 6, 1, 64),
};

interface AdminSample {
  readonly uploadSeconds: number;
  readonly commitSeconds: number;
  readonly identifies: number;
  readonly acked: number;
  readonly adminCores?: number;
  /** Seconds of the commit spent reading and diffing, publishing, storing (from its log). */
  readonly split: readonly number[];
}

interface DispatcherSample {
  readonly perSecond: number;
  readonly cores?: number;
}

class AudienceBench {
  readonly supervisor = new Supervisor();
  readonly prefix = `bench.audience.${Date.now().toString(36)}.`;
  readonly token = randomBytes(24).toString('base64url');
  readonly kafka = kafkaClient(settings.brokers);
  readonly stand = { tearDown: () => (this.tornDown ??= this.removeAll()) };
  private admin?: Admin;
  private sourceId?: string;
  private adminPid?: number;
  private url = '';
  private producer?: Producer;
  private tornDown?: Promise<void>;
  private lastSplit: number[] = [];
  private child?: Managed;
  private readonly secretsKey = randomBytes(32).toString('base64');
  private sink?: Server;
  private sinkCount = 0;
  private sinkFirstAt = 0;

  async run(): Promise<string> {
    progress(`setting up (topic prefix ${this.prefix})`);
    await this.setUp();
    const admin: AdminSample[] = [];
    const raw: number[] = [];
    for (let round = 1; round <= settings.rounds; round += 1) {
      progress(`round ${round}/${settings.rounds}`);
      const adminFirst = round % 2 === 1;
      if (!adminFirst) raw.push(await this.measureRaw());
      admin.push(await this.measureAdmin(round));
      if (adminFirst) raw.push(await this.measureRaw());
    }
    const dispatcher = await this.measureDispatcher(settings.rounds * settings.members);
    return this.report(admin, raw, dispatcher);
  }

  /** A local webhook endpoint answering 200, counting POSTs. */
  private async startSink(): Promise<void> {
    const sink = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        if (this.sinkCount === 0) this.sinkFirstAt = performance.now();
        this.sinkCount += 1;
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    this.sink = sink;
  }

  /**
   * Routes what the rounds published (router not timed), then times the dispatcher from its
   * first request at the sink to the `settings.members`-th.
   */
  private async measureDispatcher(published: number): Promise<DispatcherSample> {
    progress(`dispatcher reference: routing ${count(published)} identifies first (not timed)`);
    const router = await this.startApp('router', ROUTER_MAIN, 'ROUTER_PORT', {});
    await this.until(
      async () => (await this.recordsOn(`${this.prefix}sluice.deliveries.v1`)) >= published,
      router,
    );
    await this.supervisor.stop(router);
    progress('dispatcher reference: delivering to a local sink');
    const dispatcher = await this.startApp('dispatcher', DISPATCHER_MAIN, 'DISPATCHER_PORT', {
      DISPATCHER_ALLOWED_CIDRS: '127.0.0.0/8',
      SECRETS_ENCRYPTION_KEY: this.secretsKey,
    });
    await this.until(() => Promise.resolve(this.sinkCount > 0), dispatcher);
    const cpuBefore = cpuSeconds(dispatcher.pid);
    const start = this.sinkFirstAt;
    const startCount = this.sinkCount;
    await this.until(() => Promise.resolve(this.sinkCount >= settings.members), dispatcher);
    const seconds = (performance.now() - start) / 1000;
    const cpuAfter = cpuSeconds(dispatcher.pid);
    await this.supervisor.stop(dispatcher);
    const perSecond = (settings.members - 1) / seconds;
    const cores =
      cpuBefore === undefined || cpuAfter === undefined
        ? undefined
        : (cpuAfter - cpuBefore) / ((performance.now() - start) / 1000);
    progress(
      `  dispatcher to sink: ${count(perSecond)} deliveries/s (from delivery ${startCount})`,
    );
    return { perSecond, cores };
  }

  private async startApp(
    name: string,
    main: string,
    portVariable: string,
    extra: { readonly [name: string]: string },
  ): Promise<Managed> {
    const port = await freePort();
    const child = this.supervisor.spawn(name, process.execPath, [main], {
      env: {
        ...process.env,
        KAFKA_BROKERS: settings.brokers,
        DATABASE_URL: settings.databaseUrl,
        KAFKA_TOPIC_PREFIX: this.prefix,
        KAFKA_TOPIC_PARTITIONS: String(settings.partitions),
        [portVariable]: String(port),
        HTTP_HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ...extra,
      },
    });
    await waitForHttp(`http://127.0.0.1:${port}/health/ready`, child, READY_TIMEOUT_MS);
    return child;
  }

  /** Polls `done` until true; fails when `child` died or after DRAIN_TIMEOUT_MS. */
  private async until(done: () => Promise<boolean>, child: Managed): Promise<void> {
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while (!(await done())) {
      if (!child.running) throw new Error(child.describeExit());
      if (Date.now() > deadline)
        throw new Error(`${child.name}: no progress within ${DRAIN_TIMEOUT_MS} ms`);
      await sleep(20);
    }
  }

  private async setUp(): Promise<void> {
    this.admin = this.kafka.admin();
    await this.admin.connect();
    await createTopics(this.admin, [`${this.prefix}${RAW_TOPIC}`], settings.partitions);
    const port = await freePort();
    const child = this.supervisor.spawn('admin', process.execPath, [ADMIN_MAIN], {
      env: {
        ...process.env,
        KAFKA_BROKERS: settings.brokers,
        DATABASE_URL: settings.databaseUrl,
        KAFKA_TOPIC_PREFIX: this.prefix,
        KAFKA_TOPIC_PARTITIONS: String(settings.partitions),
        ADMIN_PORT: String(port),
        HTTP_HOST: '127.0.0.1',
        LOG_LEVEL: 'log',
        ADMIN_TOKENS: this.token,
        SECRETS_ENCRYPTION_KEY: this.secretsKey,
      },
    });
    this.adminPid = child.pid;
    this.child = child;
    // The admin app logs how a commit's time split (read and diff, publish, store).
    child.onLine((line) => {
      const split = /read and diff (\d+) ms, publish (\d+) ms, store (\d+) ms/.exec(line);
      if (split) this.lastSplit = split.slice(1).map((ms) => Number(ms) / 1000);
    });
    this.url = `http://127.0.0.1:${port}/admin/v1`;
    await waitForHttp(`http://127.0.0.1:${port}/health/ready`, child, READY_TIMEOUT_MS);
    this.sourceId = (await this.call('POST', '/sources', { name: `bench ${this.prefix}` })).id;
    await this.startSink();
    // The identifies are routed to this destination only for the dispatcher reference.
    const destination = `/sources/${this.sourceId}/destination`;
    await this.call('POST', destination, { name: 'bench sink' });
    const sinkPort = (this.sink?.address() as AddressInfo).port;
    await this.call('POST', `${destination}/webhooks`, {
      url: `http://127.0.0.1:${sinkPort}/hook`,
    });
    await this.call('POST', `${destination}/enable`);
    const connection = new built.KafkaConnection({
      brokers: settings.brokers.split(','),
      clientId: 'sluice-bench-raw',
      topicPrefix: this.prefix,
    });
    this.producer = new built.BatchProducer(connection);
    await this.producer.connect();
  }

  /** A first sync of a new audience: upload in pages, then commit; both timed. */
  private async measureAdmin(round: number): Promise<AdminSample> {
    const audience = await this.call('POST', `/sources/${this.sourceId}/audiences`, {
      name: `Bench Audience ${round}`,
    });
    const path = `/sources/${this.sourceId}/audiences/${audience.id}`;
    const sync = await this.call('POST', `${path}/syncs`);
    this.lastSplit = [];
    const ids = memberIds(round);
    const uploadStart = performance.now();
    for (let start = 0; start < ids.length; start += settings.pageMembers) {
      const userIds = ids.slice(start, start + settings.pageMembers);
      await this.call('POST', `${path}/syncs/${sync.id}/members`, { userIds });
    }
    const uploadSeconds = (performance.now() - uploadStart) / 1000;
    const before = await this.recordsOn(`${this.prefix}sluice.calls.v1`);
    const cpuBefore = cpuSeconds(this.adminPid);
    const commitStart = performance.now();
    const committed = await this.call<{ identifies: number }>(
      'POST',
      `${path}/syncs/${sync.id}/commit`,
    );
    const commitSeconds = (performance.now() - commitStart) / 1000;
    const cpuAfter = cpuSeconds(this.adminPid);
    const acked = (await this.recordsOn(`${this.prefix}sluice.calls.v1`)) - before;
    const adminCores =
      cpuBefore === undefined || cpuAfter === undefined
        ? undefined
        : (cpuAfter - cpuBefore) / commitSeconds;
    progress(
      `  admin: ${count(ids.length)} uploaded in ${uploadSeconds.toFixed(2)} s, committed in ` +
        `${commitSeconds.toFixed(2)} s (${count(committed.identifies / commitSeconds)} identifies/s)`,
    );
    // The log line may trail the answer by a moment.
    for (let i = 0; i < 40 && this.lastSplit.length === 0; i += 1) await sleep(50);
    const split = this.lastSplit;
    return {
      uploadSeconds,
      commitSeconds,
      identifies: committed.identifies,
      acked,
      adminCores,
      split,
    };
  }

  /** The BatchProducer alone, the same records (built beforehand), same chunks and acks. */
  private async measureRaw(): Promise<number> {
    const trait = {
      sourceId: this.sourceId,
      audienceId: randomUUID(),
      kind: 'audience',
      key: 'bench_audience_1',
    };
    const stamp = { receivedAt: Date.now(), newMessageId: randomUUID };
    const records = memberIds(0).map((userId) => ({
      ...built.traitIdentifyRecord(trait, userId, true, stamp),
      topic: RAW_TOPIC,
    }));
    const start = performance.now();
    await built.publishAll(this.producer as Producer, records);
    const perSecond = records.length / ((performance.now() - start) / 1000);
    progress(`  raw BatchProducer: ${count(perSecond)} records/s`);
    return perSecond;
  }

  private report(
    admin: readonly AdminSample[],
    raw: readonly number[],
    dispatcher: DispatcherSample,
  ): string {
    const rates = admin.map((s) => s.identifies / s.commitSeconds);
    const rows = [
      [
        'round',
        'upload s',
        'commit s',
        'read+diff / publish / store s',
        'identifies',
        'acked on topic',
        'identifies/s',
        'admin cores',
        'raw records/s',
        'ratio',
      ],
      ...admin.map((s, i) => [
        String(i + 1),
        fixed(s.uploadSeconds, 2),
        fixed(s.commitSeconds, 2),
        s.split.length === 3 ? s.split.map((x) => x.toFixed(2)).join(' / ') : '?',
        count(s.identifies),
        count(s.acked),
        count(rates[i]),
        fixed(s.adminCores ?? NaN, 2),
        count(raw[i]),
        fixed(rates[i] / raw[i], 2),
      ]),
    ];
    const warnings = admin
      .filter((s) => s.identifies !== settings.members || s.acked !== settings.members)
      .map(
        (s) =>
          `warning: ${count(s.identifies)} identifies, ${count(s.acked)} records acked for ${count(settings.members)} members`,
      );
    const medianRate = median(rates);
    const medianRaw = median(raw);
    return [
      `audience benchmark: first sync of ${count(settings.members)} members, pages of ${count(settings.pageMembers)}, ${settings.partitions} partitions, ${settings.rounds} round(s), acks=all`,
      table(rows),
      `median commit time: ${fixed(median(admin.map((s) => s.commitSeconds)), 2)} s; median upload time: ${fixed(median(admin.map((s) => s.uploadSeconds)), 2)} s`,
      `identifies/s (commit, Kafka-acked): ${count(medianRate)}`,
      `reference, BatchProducer alone, same records: ${count(medianRaw)} records/s`,
      `ratio identifies/s / BatchProducer records/s: ${fixed(medianRate / medianRaw, 2)} ` +
        `(of the medians; median of the per-round ratios ${fixed(median(rates.map((r, i) => r / raw[i])), 2)})`,
      `identifies/s of the publish step alone (commit minus database work), median: ${count(median(admin.filter((s) => s.split.length === 3).map((s) => s.identifies / s.split[1])))}`,
      `reference, dispatcher to a local sink (200 answers, same identifies, after the rounds): ${count(dispatcher.perSecond)} deliveries/s, ${fixed(dispatcher.cores ?? NaN, 2)} dispatcher cores`,
      `ratio identifies/s / dispatcher-to-sink deliveries/s: ${fixed(medianRate / dispatcher.perSecond, 2)}`,
      ...warnings,
    ].join('\n');
  }

  private async call<T = { id: string }>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).catch((error: unknown) => {
      // A dead admin app says why, rather than `fetch failed`.
      if (this.child && !this.child.running) throw new Error(this.child.describeExit());
      const cause = (error as { cause?: unknown }).cause;
      throw new Error(`${method} ${path} failed: ${String(error)} (${String(cause)})`);
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }

  private async recordsOn(topic: string): Promise<number> {
    const offsets = await (this.admin as Admin).fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  }

  private async removeAll(): Promise<void> {
    await this.producer?.disconnect().catch(() => undefined);
    this.sink?.closeAllConnections();
    this.sink?.close();
    await removeStand({
      supervisor: this.supervisor,
      databaseUrl: settings.databaseUrl,
      sourceId: this.sourceId,
      admin: this.admin,
      prefix: this.prefix,
    });
  }
}

/** Member ids of a round: distinct per round, like real user ids in length. */
function memberIds(round: number): string[] {
  return Array.from(
    { length: settings.members },
    (_, i) => `user-${round}-${String(i).padStart(8, '0')}`,
  );
}

runBench(new AudienceBench());

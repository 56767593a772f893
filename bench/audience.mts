/**
 * The audience benchmark: the first sync of a 100,000-member audience through the admin
 * app (a child process, as in production): the time to upload the list in pages, the time
 * to commit it (diff, 100,000 identifies published and acknowledged by Kafka with acks=all,
 * membership stored), and identifies/s. The reference, measured in the same run with rounds
 * interleaved: the project's BatchProducer alone sending the same 100,000 records (built by
 * the same function, same size, same chunks and acks) to a topic of the same partitions.
 * The dispatcher-to-sink reference is added once the dispatcher has its own benchmark.
 *
 * Run through `npm run bench:audience` (bench/run.sh builds, starts the services, migrates).
 * Settings: BENCH_MEMBERS (100000), BENCH_PAGE_MEMBERS (10000), BENCH_ROUNDS (3),
 * KAFKA_TOPIC_PARTITIONS (6).
 */
import { randomBytes, randomUUID } from 'node:crypto';
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
    return this.report(admin, raw);
  }

  private async setUp(): Promise<void> {
    this.admin = this.kafka.admin();
    await this.admin.connect();
    await createTopics(this.admin, [`${this.prefix}${RAW_TOPIC}`], settings.partitions);
    const port = await freePort();
    const child = this.supervisor.spawn(
      'admin',
      process.execPath,
      ['--disable-warning=TimeoutNegativeWarning', ADMIN_MAIN],
      {
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
          SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        },
      },
    );
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

  private report(admin: readonly AdminSample[], raw: readonly number[]): string {
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
      'reference dispatcher-to-sink deliveries/s: pending (the dispatcher has no benchmark yet)',
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

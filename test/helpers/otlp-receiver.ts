import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

import { eventually } from './services';

/** One span as an OTLP/HTTP JSON export carries it, with its service's name. */
export interface ReceivedSpan {
  readonly service: string;
  readonly scope: string;
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind: 2 server, 3 client, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  /** The spans this one links to. */
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};
type KeyValue = { key: string; value: AnyValue };

/**
 * A real OTLP/HTTP receiver on 127.0.0.1 for tests: takes `POST /v1/traces` in the protobuf
 * or the JSON encoding (gzip or not), as an OpenTelemetry Collector would, and keeps the spans.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private server?: Server;

  async start(): Promise<this> {
    const server = createServer((req, res) => this.take(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return this;
  }

  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  get url(): string {
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}`;
  }

  /** Waits until the spans of `traceId` include at least `count`. */
  async trace(traceId: string, count: number, timeoutMs = 20_000): Promise<ReceivedSpan[]> {
    return eventually(
      () => {
        const spans = this.spans.filter((s) => s.traceId === traceId);
        return spans.length >= count ? spans : undefined;
      },
      timeoutMs,
      `${count} span(s) of trace ${traceId}`,
    );
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }

  private take(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const type = String(req.headers['content-type']);
      if (type.startsWith('application/json')) {
        this.spans.push(...decodeExport(JSON.parse(body.toString('utf8'))));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else if (type.startsWith('application/x-protobuf')) {
        this.spans.push(...decodeExport(decodeProtobufExport(body)));
        // An empty ExportTraceServiceResponse.
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } else {
        res.writeHead(415).end();
      }
    });
  }
}

/** The spans of an `ExportTraceServiceRequest` in OTLP's JSON encoding. */
function decodeExport(request: any): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          service: String(resource['service.name']),
          scope: scopeSpans.scope?.name ?? '',
          traceId: hexId(span.traceId),
          spanId: hexId(span.spanId),
          parentSpanId: hexId(span.parentSpanId),
          name: span.name,
          kind: span.kind,
          attributes: attributesOf(span.attributes),
          statusCode: span.status?.code ?? 0,
          links: linksOf(span.links),
        });
      }
    }
  }
  return spans;
}

function linksOf(list: { traceId: string; spanId: string }[] | undefined): ReceivedSpan['links'] {
  return (list ?? []).map((link) => ({ traceId: hexId(link.traceId), spanId: hexId(link.spanId) }));
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    attributes[key] =
      value.stringValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
      value.doubleValue ??
      value.boolValue ??
      '';
  }
  return attributes;
}

/** OTLP JSON ids are hex; tolerate base64 too (protobuf's JSON mapping of bytes). */
function hexId(id: string | undefined): string {
  if (!id) return '';
  return /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');
}

/**
 * An `ExportTraceServiceRequest` in protobuf's wire format (opentelemetry-proto's
 * trace/v1/trace.proto and common/v1/common.proto), read into the shape of its JSON encoding:
 * only the fields the tests look at.
 */
function decodeProtobufExport(bytes: Buffer): any {
  const keyValues = (list: Buffer[]) =>
    list.map((kv) => {
      const f = fields(kv);
      return { key: text(f, 1), value: anyValue(first(f, 2)) };
    });
  return {
    resourceSpans: (fields(bytes).get(1) ?? []).map((rs) => {
      const r = fields(rs as Buffer);
      const resource = first(r, 1);
      return {
        resource: { attributes: keyValues(resource ? list(fields(resource), 1) : []) },
        scopeSpans: list(r, 2).map((ss) => {
          const s = fields(ss);
          const scope = first(s, 1);
          return {
            scope: { name: scope ? text(fields(scope), 1) : '' },
            spans: list(s, 2).map((sp) => {
              const f = fields(sp);
              const status = first(f, 15);
              return {
                traceId: hex(first(f, 1)),
                spanId: hex(first(f, 2)),
                parentSpanId: hex(first(f, 4)),
                name: text(f, 5),
                kind: Number(f.get(6)?.[0] ?? 0),
                attributes: keyValues(list(f, 9)),
                status: { code: status ? Number(fields(status).get(3)?.[0] ?? 0) : 0 },
                links: list(f, 13).map((link) => {
                  const l = fields(link);
                  return { traceId: hex(first(l, 1)), spanId: hex(first(l, 2)) };
                }),
              };
            }),
          };
        }),
      };
    }),
  };
}

/** An `AnyValue`: string (1), bool (2), int (3) or double (4). */
function anyValue(bytes: Buffer | undefined): AnyValue {
  if (!bytes) return {};
  const f = fields(bytes);
  if (f.has(1)) return { stringValue: text(f, 1) };
  if (f.has(2)) return { boolValue: f.get(2)?.[0] === 1n };
  if (f.has(3)) return { intValue: Number(BigInt.asIntN(64, f.get(3)?.[0] as bigint)) };
  if (f.has(4)) return { doubleValue: (f.get(4)?.[0] as Buffer).readDoubleLE(0) };
  return {};
}

type Field = bigint | Buffer;

/** A message's fields by number: varints as bigints, everything else as its bytes. */
function fields(bytes: Buffer): Map<number, Field[]> {
  const out = new Map<number, Field[]>();
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++];
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < bytes.length) {
    const tag = Number(varint());
    const wire = tag & 7;
    let value: Field;
    if (wire === 0) value = varint();
    else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      value = bytes.subarray(at, at + size);
      at += size;
    } else if (wire === 2) {
      const size = Number(varint());
      value = bytes.subarray(at, at + size);
      at += size;
    } else throw new Error(`protobuf wire type ${wire} is not read here`);
    const number = tag >>> 3;
    out.set(number, [...(out.get(number) ?? []), value]);
  }
  return out;
}

function list(f: Map<number, Field[]>, number: number): Buffer[] {
  return (f.get(number) ?? []) as Buffer[];
}

function first(f: Map<number, Field[]>, number: number): Buffer | undefined {
  return list(f, number)[0];
}

function text(f: Map<number, Field[]>, number: number): string {
  return first(f, number)?.toString('utf8') ?? '';
}

function hex(bytes: Buffer | undefined): string {
  return bytes?.toString('hex') ?? '';
}

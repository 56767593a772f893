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
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};
type KeyValue = { key: string; value: AnyValue };

/**
 * A real OTLP/HTTP receiver on 127.0.0.1 for tests: takes `POST /v1/traces` in the JSON
 * encoding (gzip or not), as an OpenTelemetry Collector would, and keeps the spans.
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
      if (!String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      this.spans.push(...decodeExport(JSON.parse(body.toString('utf8'))));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
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
        });
      }
    }
  }
  return spans;
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

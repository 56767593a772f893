/**
 * The OTLP/HTTP receiver of the benchmarks' traced sides: reads each export's whole body and
 * answers 200 `{}`, as an OpenTelemetry Collector does, and keeps nothing.
 *
 * `node bench/otlp-sink.mts` listens on 127.0.0.1 and a free port, prints `{"port":N}`, and
 * stops on SIGTERM or SIGINT.
 */
import { createServer } from 'node:http';

import { answerJson, serve } from './bare-http.mts';

const EMPTY_JSON = Buffer.from('{}');

// An empty ExportTraceServiceResponse in the request's encoding: the exporter reads it.
const server = createServer((request, response) => {
  request.on('data', () => {});
  request.on('end', () => {
    if (String(request.headers['content-type']).startsWith('application/json')) {
      answerJson(response, 200, EMPTY_JSON);
    } else {
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    }
  });
});
serve(server);

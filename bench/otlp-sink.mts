/**
 * The OTLP/HTTP receiver of the benchmarks' traced sides: reads each export's whole body and
 * answers 200 `{}`, as an OpenTelemetry Collector does, and keeps nothing.
 *
 * `node bench/otlp-sink.mts` listens on 127.0.0.1 and a free port, prints `{"port":N}`, and
 * stops on SIGTERM or SIGINT.
 */
import { createServer } from 'node:http';

import { answerJson, serve } from './bare-http.mts';

const EMPTY = Buffer.from('{}');

const server = createServer((request, response) => {
  request.on('data', () => {});
  request.on('end', () => answerJson(response, 200, EMPTY));
});
serve(server);

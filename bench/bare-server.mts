/**
 * The physical limit for `/v1/track`: a bare `node:http` server that reads the whole body,
 * parses it with JSON.parse and answers 200 `{"success":true}`, in its own process like
 * ingest. Nothing else: no auth, no validation, no Kafka.
 *
 * `node bench/bare-server.mts` listens on 127.0.0.1 and a free port, prints `{"port":N}`, and
 * stops on SIGTERM or SIGINT.
 */
import { createServer } from 'node:http';

import { answerJson, serve } from './bare-http.mts';

const SUCCESS = Buffer.from('{"success":true}');
const INVALID = Buffer.from('{"code":"invalid_json","message":"the body is not valid JSON"}');

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    let answer = SUCCESS;
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      answer = INVALID;
    }
    answerJson(response, answer === SUCCESS ? 200 : 400, answer);
  });
});
serve(server);

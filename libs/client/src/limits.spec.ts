import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  MAX_CALL_BYTES as CONTRACT_CALL,
  MAX_REQUEST_BYTES as CONTRACT_REQUEST,
} from '@app/contracts';

import { LIBRARY } from './library';
import { MAX_CALL_BYTES, MAX_REQUEST_BYTES } from './limits';

describe('the client limits', () => {
  it('equal the limits ingest enforces (libs/contracts)', () => {
    expect(MAX_CALL_BYTES).toBe(CONTRACT_CALL);
    expect(MAX_REQUEST_BYTES).toBe(CONTRACT_REQUEST);
  });

  it('name the library as its package.json does', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    expect(LIBRARY).toEqual({ name: pkg.name, version: pkg.version });
  });
});

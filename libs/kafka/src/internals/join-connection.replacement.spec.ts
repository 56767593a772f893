import {
  type ConnectionPoolInternals,
  FETCH_CONNECTION,
  installJoinConnectionReplacement,
  wrapGetConnectionByRequest,
} from './join-connection.replacement';
import { KafkajsVersionError } from './kafkajs-version';

/** kafkajs's ConnectionPool as far as the wrapper sees it: fetches on 1, the rest on 0. */
class FakePool implements ConnectionPoolInternals {
  getConnectionByRequest(protocolRequest: { request: { apiKey: number } }): Promise<unknown> {
    return this.getConnection(protocolRequest.request.apiKey === 1 ? 1 : 0);
  }

  getConnection(index = 0): Promise<unknown> {
    return Promise.resolve(index);
  }
}
wrapGetConnectionByRequest(FakePool.prototype);

describe(wrapGetConnectionByRequest.name, () => {
  it.each([
    { api: 'Fetch', apiKey: 1, connection: FETCH_CONNECTION },
    { api: 'JoinGroup', apiKey: 11, connection: FETCH_CONNECTION },
    { api: 'SyncGroup', apiKey: 14, connection: FETCH_CONNECTION },
    { api: 'OffsetCommit', apiKey: 8, connection: 0 },
    { api: 'Heartbeat', apiKey: 12, connection: 0 },
    { api: 'LeaveGroup', apiKey: 13, connection: 0 },
    { api: 'Produce', apiKey: 0, connection: 0 },
  ])('sends $api over connection $connection', async ({ apiKey, connection }) => {
    await expect(new FakePool().getConnectionByRequest({ request: { apiKey } })).resolves.toBe(
      connection,
    );
  });
});

describe(installJoinConnectionReplacement.name, () => {
  it('refuses another kafkajs than the pinned one', () => {
    expect(() => installJoinConnectionReplacement('2.3.0')).toThrow(KafkajsVersionError);
  });
});

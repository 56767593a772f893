import { describeFailure, runGo } from './go-command';

/** Compiling with the race detector on a busy machine takes a while. */
const GO_TEST_TIMEOUT_MS = 300_000;

describe('the Go client library (libs/analytics-go)', () => {
  it(
    'passes go test -race',
    async () => {
      const args = ['test', '-race', '-count=1', './...'];
      const result = await runGo(args, GO_TEST_TIMEOUT_MS - 10_000);
      if (result.code !== 0) throw new Error(describeFailure(args, result));
      expect(result.stdout).toMatch(
        /^ok\s+github\.com\/sluice-dev\/sluice\/libs\/analytics-go\/v2\s/m,
      );
    },
    GO_TEST_TIMEOUT_MS,
  );
});

/**
 * Local runs: all four apps in one process, each on its own port, with the same
 * environment (`npm start`). Production runs one app per process.
 */
import { loadAdminConfig } from '../../admin/src/config';
import { startAdmin } from '../../admin/src/main';
import { loadDispatcherConfig } from '../../dispatcher/src/config';
import { startDispatcher } from '../../dispatcher/src/main';
import { loadIngestConfig } from '../../ingest/src/config';
import { startIngest } from '../../ingest/src/main';
import { loadRouterConfig } from '../../router/src/config';
import { startRouter } from '../../router/src/main';
import { JsonLogger } from '@app/observability';
import { closeOnSignal, exitOnStartupError, setV8Options } from '@app/runtime';

/**
 * Local runs may deliver to receivers on this machine: the SSRF guard admits loopback unless
 * DISPATCHER_ALLOWED_CIDRS says otherwise. Production's default admits nothing internal.
 */
const LOCAL_ALLOWED_CIDRS = '127.0.0.0/8,::1/128';

async function main(): Promise<void> {
  // Read every configuration first, so one bad variable stops start-up before anything runs.
  const configs = {
    ingest: loadIngestConfig(),
    admin: loadAdminConfig(),
    router: loadRouterConfig(),
    dispatcher: loadDispatcherConfig({
      DISPATCHER_ALLOWED_CIDRS: LOCAL_ALLOWED_CIDRS,
      ...process.env,
    }),
  };
  // Upstream first at shutdown: stop taking calls, then drain routing, then deliveries.
  const options = { logger: new JsonLogger('local', configs.ingest.logLevel) };
  const apps = [
    await startIngest(configs.ingest, options),
    await startAdmin(configs.admin, options),
    await startRouter(configs.router, options),
    await startDispatcher(configs.dispatcher, options),
  ];
  const urls = await Promise.all(apps.map((app) => app.getUrl()));
  const names = Object.keys(configs);
  const lines = names.map(
    (name, i) => `  ${name.padEnd(10)} ${urls[i]}  (health: ${urls[i]}/health/ready)`,
  );
  const help = [
    'The admin API takes the bearer token in ADMIN_TOKENS (npm start: .local/admin-token);',
    `its OpenAPI document: ${urls[1]}/admin/v1/openapi.json (browsable at ${urls[1]}/admin/docs);`,
    `the operator console, with the same token: ${urls[1]}/console`,
    `The dispatcher may deliver to ${configs.dispatcher.dispatcher.allowedCidrs.join(', ') || 'no internal address'} (DISPATCHER_ALLOWED_CIDRS).`,
  ];
  process.stdout.write(
    `\nSluice is running:\n${lines.join('\n')}\n${help.join('\n')}\nCtrl-C stops it.\n\n`,
  );
  closeOnSignal(apps, configs.ingest.shutdownTimeoutMs);
}

setV8Options();
main().catch(exitOnStartupError('local'));

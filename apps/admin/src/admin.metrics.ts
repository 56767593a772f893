import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { Metrics } from '@app/observability';

/** Counts admin API requests by route template, method and status (ids never become labels). */
export function countAdminRequests(app: NestFastifyApplication): void {
  const requests = app
    .get(Metrics)
    .counter('sluice_admin_requests_total', 'Admin API requests', ['route', 'method', 'status']);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url;
      if (route?.startsWith('/admin/')) {
        requests.inc({ route, method: request.method, status: String(reply.statusCode) });
      }
      done();
    });
}

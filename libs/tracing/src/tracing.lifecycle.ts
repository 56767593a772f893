import { OnApplicationShutdown } from '@nestjs/common';

import { stopTracing } from './tracing-sdk';

/** Exports an app's last spans when it closes, after its consumers and server stopped. */
export class TracingLifecycle implements OnApplicationShutdown {
  constructor(private readonly app: string) {}

  async onApplicationShutdown(): Promise<void> {
    await stopTracing(this.app);
  }
}

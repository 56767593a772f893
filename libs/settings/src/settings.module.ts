import {
  type DynamicModule,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { DataSource } from 'typeorm';

import { SettingsCache, type SettingsCacheOptions } from './settings.cache';
import { createSettingsDataSource, type SettingsDataSourceOptions } from './settings.data-source';

/** Options of `SettingsModule.forRoot`. */
export interface SettingsModuleOptions {
  /** How to reach PostgreSQL. */
  readonly database: SettingsDataSourceOptions;
  /** How the settings cache refreshes. */
  readonly cache: SettingsCacheOptions;
}

/**
 * Starts the cache once every module is initialized, and on shutdown stops it before
 * destroying the DataSource it reads through (one hook, so the order is certain).
 */
@Injectable()
class SettingsLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(SettingsCache) private readonly cache: SettingsCache,
  ) {}

  /** Loads the first snapshot and starts listening; start-up fails if it cannot. */
  async onApplicationBootstrap(): Promise<void> {
    await this.cache.start();
  }

  /** Stops the cache, then closes the pool. */
  async onApplicationShutdown(): Promise<void> {
    await this.cache.stop();
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

/**
 * Provides the settings `DataSource` (initialized while the module is created) and the
 * started `SettingsCache` to the importing app; global, so feature modules can inject both.
 */
@Module({})
export class SettingsModule {
  /** Configures the module; call once, in an app's root module. */
  static forRoot(options: SettingsModuleOptions): DynamicModule {
    return {
      module: SettingsModule,
      global: true,
      providers: [
        {
          provide: DataSource,
          useFactory: () => createSettingsDataSource(options.database).initialize(),
        },
        {
          provide: SettingsCache,
          useFactory: (dataSource: DataSource) => new SettingsCache(dataSource, options.cache),
          inject: [DataSource],
        },
        SettingsLifecycle,
      ],
      exports: [DataSource, SettingsCache],
    };
  }
}

export * from './health';
export * from './json.logger';
export * from './metrics';
export * from './observability.module';

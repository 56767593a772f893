export * from './health';
export * from './counter-tally';
export * from './json.logger';
export * from './light-histogram';
export * from './metrics';
export * from './observability.module';

export * from './http-app';
export * from './runtime.module';

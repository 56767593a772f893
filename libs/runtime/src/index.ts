export * from './http-app';
export * from './runtime.module';
export * from './json-error.filter';
export * from './v8-options';

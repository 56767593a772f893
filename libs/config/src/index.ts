export * from './base.env';
export * from './common';
export * from './env';
export * from './kafka-security';
export * from './tracing';

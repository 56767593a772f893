export * from './base.env';
export * from './common';
export * from './env';

export * from './calls';
export * from './headers';
export * from './limits';
export * from './topics';

export * from './call.dto';
export * from './calls';
export * from './headers';
export * from './integrations';
export * from './limits';
export * from './timestamps';
export * from './topics';
export * from './validate-call';

export * from './batch.producer';
export * from './kafka.connection';
export * from './kafka.module';
export * from './kafka.options';
export * from './kafka.transport';
export * from './partition-batch';
export * from './records';
export * from './topic.admin';

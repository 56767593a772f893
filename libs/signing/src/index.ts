export * from './hmac';
export * from './secret-box';

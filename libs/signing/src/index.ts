export * from './hmac';
export * from './secret-box';
export * from './standard-webhooks';

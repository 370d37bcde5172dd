/**
 * @module Admin users and sessions.
 */
export * from './service.ts';
export * from './totp.ts';
export * from './users.ts';

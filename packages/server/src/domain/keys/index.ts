/**
 * @module API keys: secrets, scopes and the workspace key service.
 */
export * from './scopes.ts';
export * from './secret.ts';
export * from './service.ts';

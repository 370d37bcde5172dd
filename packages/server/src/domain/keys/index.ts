/**
 * @module API keys: secrets, scopes and the workspace key service.
 */
export * from './scopes.ts';
export * from './secret.ts';
export * from './service.ts';
export { invalidateKeyCaches } from './invalidation.ts';
export { issueKey, type NewKey } from './issue.ts';
export type { ApiKeyRecord, IssuedKey } from './record.ts';
export { bearerToken } from './verify.ts';

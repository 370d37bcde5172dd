/**
 * @module Agents domain: catalog, aliases, plans and the orchestrator's router.
 */
export * from './alias.ts';
export * from './catalog.ts';
export * from './plans.ts';
export * from './router.ts';
export { ROUTER_KEYWORDS, type KeywordTable } from './router-keywords.ts';
export * from './availability.ts';

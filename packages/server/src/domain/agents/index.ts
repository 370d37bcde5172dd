/**
 * @module Agents domain: a workspace's agents (availability, plan and pause settings, the panel's view). The
 * catalog, aliases, plans and the orchestrator's router are the shared vocabulary (src/vocabulary/), re-exported here.
 */
export * from '../../vocabulary/alias.ts';
export * from '../../vocabulary/catalog.ts';
export * from '../../vocabulary/plans.ts';
export * from '../../vocabulary/router.ts';
export { ROUTER_KEYWORDS, type KeywordTable } from '../../vocabulary/router-keywords.ts';
export * from './availability.ts';

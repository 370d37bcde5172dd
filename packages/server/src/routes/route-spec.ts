/**
 * @module The shape of one contract route, as generated/routes.ts describes it.
 */
export type { RouteSpec, SecurityRequirement, SecurityScheme } from '../../../../generated/routes.ts';

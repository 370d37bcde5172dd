/**
 * @module The contract's routes as the app mounts them (generated from the OpenAPI document).
 */
export { routes, type OperationId } from '../../../generated/routes.ts';

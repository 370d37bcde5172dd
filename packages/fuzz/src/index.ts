/**
 * @module Public entry of the contract fuzzer: `runFuzz` (in-process through `app.request`, or over HTTP), the
 * checks by their Schemathesis names, the schema compiler, and the report writers.
 */
export {
  runFuzz,
  ALL_PHASES,
  type FuzzOptions,
  type FuzzResult,
  type FuzzSetup,
  type Failure,
  type ProgressEvent,
  type OperationSummary,
  type Interaction,
} from './runner.ts';
export {
  CHECKS,
  CHECK_NAMES,
  runChecks,
  errorStatusFromContract,
  DEFAULT_PROVIDER_NAMES,
  type CheckName,
  type CheckContext,
  type CheckConfig,
} from './checks/index.ts';
export { inProcessTransport, httpTransport, type InProcessApp, type Transport, type RecordedResponse } from './transport.ts';
export type { Credentials, InboundSigning } from './auth.ts';
export type { Case, Phase, PreparedRequest } from './case.ts';
export { loadDocument } from './contract/document.ts';
export { listOperations, type Operation } from './contract/operations.ts';
export { schemaArbitrary } from './schema/arbitrary.ts';
export { createValidator } from './schema/validator.ts';
export { serializeParameter } from './schema/serialize.ts';
export { junitReport } from './reports/junit.ts';
export { cassetteReport } from './reports/cassette.ts';
export { curlCommand, secretNames } from './reports/curl.ts';

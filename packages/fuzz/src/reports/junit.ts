/**
 * @module JUnit XML, one test case per operation (as Schemathesis writes it): each failure of the operation is
 * listed in the case's `<failure>` with its check, message and a curl command reproducing it.
 */
import { hostname } from 'node:os';
import type { FuzzResult } from '../runner.ts';

export function junitReport(result: FuzzResult): string {
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const cases = result.operations.map((op) => {
    const failures = result.failures.filter((f) => f.operationId === op.operationId);
    const attrs = `name="${esc(op.label)}" classname="${esc(op.operationId)}" time="${seconds(op.elapsedMs)}"`;
    if (failures.length === 0) return `    <testcase ${attrs}/>`;
    const message = failures.length === 1 ? failures[0]!.message : `${failures.length} checks failed`;
    const body = failures
      .map(
        (f, i) =>
          `${i + 1}. ${f.check}: ${f.message}\n   case (${f.phase}, ${f.kind}): ${f.description}${f.occurrences > 1 ? ` (${f.occurrences} cases)` : ''}\n   Reproduce with:\n   ${f.curl}`,
      )
      .join('\n\n');
    return `    <testcase ${attrs}>\n      <failure type="failure" message="${esc(message)}">${esc(body)}\n\nRun this seed again with --seed ${result.seed}</failure>\n    </testcase>`;
  });
  const failed = result.operations.filter((op) => result.failures.some((f) => f.operationId === op.operationId)).length;
  const tests = result.operations.length;
  const time = seconds(result.durationMs);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites disabled="0" errors="0" failures="${failed}" tests="${tests}" time="${time}">`,
    `  <testsuite name="schemathesis" errors="0" failures="${failed}" skipped="0" tests="${tests}" time="${time}" hostname="${esc(hostname())}">`,
    `    <properties><property name="seed" value="${result.seed}"/><property name="cases" value="${result.cases}"/><property name="base_url" value="${esc(result.baseUrl)}"/></properties>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

function esc(text: string): string {
  return (
    text
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      // XML 1.0 cannot carry most control characters, even escaped.
      .replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  );
}

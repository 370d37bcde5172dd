/**
 * @module Identifiers of runs and their records (`run_`, `stp_`, `tc_`, `drf_`, `apr_`) that pass
 * the redactor unchanged. A random base62 id sometimes spells a word the redactor removes (a model
 * name such as "gpt" inside it, about 1 in 1,000 ids), which would turn the id in a response into
 * something that matches nothing; such an id is drawn again.
 */
import { newId } from '../../random.ts';
import { redactText } from '../../redact/index.ts';

export function newPublicId(prefix: 'run' | 'stp' | 'tc' | 'drf' | 'apr'): string {
  for (;;) {
    const id = newId(prefix);
    if (redactText(id) === id) return id;
  }
}

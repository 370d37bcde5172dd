/**
 * @module Identifiers of the webhook area that reach clients (`dst_`, `int_`, `evt_`, `run_`) and
 * must pass the redactor unchanged: a random base62 id sometimes spells a word the redactor removes
 * (about 1 in 1,000), which would alter it in a response; such an id is drawn again.
 */
import { randomBase62 } from '../../random.ts';
import { redactText } from '../../redact/index.ts';

/** `<prefix>_` + `length` base62 characters, unchanged by the redactor. */
export function newWebhookPublicId(prefix: 'dst' | 'int' | 'evt' | 'run', length = prefix === 'evt' ? 24 : 20): string {
  for (;;) {
    const id = `${prefix}_${randomBase62(length)}`;
    if (redactText(id) === id) return id;
  }
}

/**
 * @module The first `service serve` on an empty store initialises it, so that `pnpm start` on a fresh
 * clone gives a server where everything works: the first workspace, its owner (password and TOTP
 * secret), an API key with every scope and the operator token. They are written to
 * `<data dir>/first-start-credentials.json`, readable by the owner of the file only (0600), and printed
 * once only when stdout is a terminal: otherwise stdout is the log, which must not hold them.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock } from '../clock.ts';
import type { SecretBox } from '../domain/webhooks/secret-box.ts';
import { listWorkspaces } from '../domain/workspaces/index.ts';
import { initWorkspace, type InitResult } from '../domain/workspaces/init.ts';
import type { Db } from '../store/db.ts';

export const CREDENTIALS_FILE = 'first-start-credentials.json';

export interface FirstStart {
  credentials: InitResult;
  file: string;
}

/** Initialises an empty store (atomically: one of several starting instances does it); undefined when it was not empty. */
export async function initialiseOnFirstStart(db: Db, secretBox: SecretBox, dataDir: string): Promise<FirstStart | undefined> {
  if ((await listWorkspaces(db)).length > 0) return undefined;
  const credentials = await initWorkspace(db, systemClock, { firstOnly: true, withOperatorToken: true, secretBox });
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, CREDENTIALS_FILE);
  await writeFile(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return { credentials, file };
}

/**
 * What the first start prints. `terminal`: stdout is a terminal (a person runs `pnpm start`), so the
 * secrets are shown once; otherwise stdout is a log (production: collected, shipped, kept), and it
 * only says where the 0600 file is.
 */
export function firstStartLines({ credentials, file }: FirstStart, url: string, terminal: boolean): string[] {
  if (!terminal) {
    return [
      `First start: the store was empty, so it now holds a first workspace (${credentials.workspaceId}, owner ${credentials.admin.email}).`,
      `Its API key (every scope), the owner's password and TOTP secret and the operator token are in ${file} (readable by its owner only),`,
      'not in this output: stdout is not a terminal, and a log must not hold them. Read the file, store them safely, then delete it.',
    ];
  }
  return [
    '',
    'First start: the store was empty, so it now holds a first workspace. Shown once:',
    `  Workspace:      ${credentials.workspaceId}`,
    `  API key:        ${credentials.apiKey}   (every scope)`,
    `  Owner email:    ${credentials.admin.email}`,
    `  Password:       ${credentials.admin.password}`,
    `  TOTP secret:    ${credentials.admin.totpSecret}   (add it to an authenticator app, or: pnpm service totp <secret>)`,
    `  Operator token: ${credentials.operatorToken}   (for /operator/workspaces and \`service workspaces --url\`)`,
    `Also written to ${file} (readable by you only); move it somewhere safe.`,
    'Try it:',
    `  curl -s ${url}/v1/inference -H "Authorization: Bearer ${credentials.apiKey}" -H 'content-type: application/json' \\`,
    `    -d '{"alias":"Prelude","agentSlug":"sales","messages":[{"role":"user","content":"Hello"}]}'`,
    '',
  ];
}

/**
 * What the first start prints: the secrets to a terminal only; to a pipe (the log in production)
 * only where the 0600 credentials file is. The spawned `serve` with a piped stdout is checked in
 * workspaces.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { firstStartLines, type FirstStart } from './first-start.ts';

const start: FirstStart = {
  credentials: {
    workspaceId: 'wksp_AbCdEfGhIjKlMnOpQrSt',
    apiKey: 'service_sk_live_AbCdEfGhIjKlMnOpQrStUvWx',
    admin: { email: 'owner@example.com', password: 'a-secret-password-1234', totpSecret: 'JBSWY3DPEHPK3PXP' },
    operatorToken: 'service_op_AbCdEfGhIjKlMnOpQrStUvWxYz012345',
  },
  file: '/srv/data/first-start-credentials.json',
};
const SECRETS = ['service_sk_live_AbCdEfGhIjKlMnOpQrStUvWx', 'a-secret-password-1234', 'JBSWY3DPEHPK3PXP', 'service_op_AbCdEfGhIjKlMnOpQrStUvWxYz012345'];

describe('firstStartLines', () => {
  it('to a terminal: every secret, once, and the file', () => {
    const text = firstStartLines(start, 'http://127.0.0.1:8080', true).join('\n');
    for (const secret of SECRETS) expect(text).toContain(secret);
    expect(text).toContain(start.file);
  });

  it('to a pipe or a file (a log): no secret, only the workspace, the owner and where the 0600 file is', () => {
    const text = firstStartLines(start, 'http://127.0.0.1:8080', false).join('\n');
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(text).toContain(start.file);
    expect(text).toContain('wksp_AbCdEfGhIjKlMnOpQrSt');
  });
});

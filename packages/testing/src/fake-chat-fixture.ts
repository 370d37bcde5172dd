/**
 * @module Test helper: one fake Chat Completions server for a test file, started before its tests, stopped after
 * them, its recorded requests emptied before each test. `fake()` is the running server.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startFakeChatServer, type FakeChatServer } from './fake-chat-server.ts';

export function useFakeChatServer(): () => FakeChatServer {
  let server: FakeChatServer | undefined;
  beforeAll(async () => {
    server = await startFakeChatServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(() => {
    if (server) server.requests.length = 0;
  });
  return () => {
    if (!server) throw new Error('the fake chat server starts before the tests');
    return server;
  };
}

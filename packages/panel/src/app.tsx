/**
 * @module The panel's shell: sign-in until a session exists, then the navigation, the workspace switcher,
 * sign-out and the screen of the current route. Admin-only screens are absent from a member's panel (the API
 * refuses a member's admin calls in any case).
 */
import { useState } from 'preact/hooks';
import { api, csrfHeader, ok, setCsrfToken } from './api.ts';
import { navigate, useRoute } from './router.ts';
import { AgentsScreen } from './screens/agents.tsx';
import { ApprovalsScreen } from './screens/approvals.tsx';
import { KeysScreen } from './screens/keys.tsx';
import { MembersScreen } from './screens/members.tsx';
import { OverviewScreen } from './screens/overview.tsx';
import { RunDetailScreen } from './screens/run-detail.tsx';
import { RunsScreen } from './screens/runs.tsx';
import { SpendingScreen } from './screens/spending.tsx';
import { SignIn } from './screens/sign-in.tsx';
import { TryScreen } from './screens/try.tsx';
import { WebhooksScreen } from './screens/webhooks.tsx';
import { isAdmin, type Session, SessionCtx } from './session.ts';
import { ErrorNote } from './ui.tsx';

interface Screen {
  path: string;
  title: string;
  admin: boolean;
}

const SCREENS: Screen[] = [
  { path: '', title: 'Overview', admin: false },
  { path: '/runs', title: 'Runs', admin: false },
  { path: '/try', title: 'Try an agent', admin: false },
  { path: '/approvals', title: 'Approvals', admin: false },
  { path: '/agents', title: 'Agents', admin: false },
  { path: '/keys', title: 'API keys', admin: true },
  { path: '/webhooks', title: 'Webhooks', admin: true },
  { path: '/spending', title: 'Spending', admin: true },
  { path: '/members', title: 'Members', admin: true },
];

export function App() {
  const [session, setSession] = useState<Session | undefined>(undefined);
  if (!session) return <SignIn onSignedIn={setSession} />;
  return (
    <SessionCtx.Provider value={{ session, setSession }}>
      <Shell session={session} setSession={setSession} />
    </SessionCtx.Provider>
  );
}

function Shell({ session, setSession }: { session: Session; setSession(next: Session | undefined): void }) {
  const route = useRoute();
  const [error, setError] = useState<unknown>(undefined);
  const admin = isAdmin(session);
  const visible = SCREENS.filter((s) => admin || !s.admin);
  const screen = visible.find((s) => s.path === route) ?? (route.startsWith('/runs/') ? SCREENS[1] : undefined);

  async function signOut() {
    try {
      await ok(api.POST('/auth/logout', { params: { header: csrfHeader() } }));
    } catch {
      // Signing out of an ended session is still signing out.
    }
    setCsrfToken(undefined);
    setSession(undefined);
  }

  async function switchTo(workspaceId: string) {
    setError(undefined);
    try {
      const next = await ok(api.POST('/auth/workspace', { params: { header: csrfHeader() }, body: { workspaceId } }));
      setSession({ ...session, workspaceId: next.workspaceId, role: next.role, workspaces: next.workspaces });
      navigate('');
    } catch (err) {
      setError(err);
    }
  }

  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Agent Invocation Service</span>
        <div class="who">
          {session.workspaces.length > 1 ? (
            <label class="inline">
              <span>Workspace</span>
              <select value={session.workspaceId} onChange={(e) => switchTo(e.currentTarget.value)}>
                {session.workspaces.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name} ({w.role})
                  </option>
                ))}
              </select>
            </label>
          ) : (
            <span>{session.workspaces.find((w) => w.id === session.workspaceId)?.name}</span>
          )}
          <span class="muted">
            {session.email} · {session.role}
          </span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav aria-label="Panel">
        <ul>
          {visible.map((s) => (
            <li key={s.path}>
              <a
                href={`/panel${s.path}`}
                aria-current={screen?.path === s.path ? 'page' : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  navigate(s.path);
                }}
              >
                {s.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" key={session.workspaceId}>
        <ErrorNote error={error} />
        {render(route, admin)}
      </main>
    </div>
  );
}

function render(route: string, admin: boolean) {
  if (route.startsWith('/runs/')) return <RunDetailScreen runId={decodeURIComponent(route.slice('/runs/'.length))} />;
  switch (route) {
    case '':
      return <OverviewScreen />;
    case '/runs':
      return <RunsScreen />;
    case '/try':
      return <TryScreen />;
    case '/approvals':
      return <ApprovalsScreen />;
    case '/agents':
      return <AgentsScreen />;
    case '/keys':
      return admin ? <KeysScreen /> : <NotForRole />;
    case '/webhooks':
      return admin ? <WebhooksScreen /> : <NotForRole />;
    case '/members':
      return admin ? <MembersScreen /> : <NotForRole />;
    case '/spending':
      return admin ? <SpendingScreen /> : <NotForRole />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>This page of the panel does not exist.</p>
        </section>
      );
  }
}

function NotForRole() {
  return (
    <section>
      <h1>Not available</h1>
      <p>Only the workspace's owners and admins manage this.</p>
    </section>
  );
}

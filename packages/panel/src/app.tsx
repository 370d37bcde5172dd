/**
 * @module The panel's shell: the session read from the cookie on load (a reload, a new tab or a deep link opens the
 * page asked for, signed in), sign-in when there is none, then the navigation, the workspace switcher, sign-out and
 * the screen of the current route. When the session ends (expiry, a sign-out elsewhere) the panel goes back to
 * sign-in saying why, on the same route. Admin-only screens are absent from a member's panel (the API refuses a
 * member's admin calls in any case).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, csrfHeader, ok, setCsrfToken } from './api.ts';
import { linkScreen } from './link-screens.tsx';
import { navigate, useRoute } from './router.ts';
import { AgentConfigurationScreen } from './screens/agent-configuration.tsx';
import { AgentsScreen } from './screens/agents.tsx';
import { ApprovalsScreen } from './screens/approvals.tsx';
import { DraftScreen, DraftsScreen } from './screens/drafts.tsx';
import { AuditScreen } from './screens/audit.tsx';
import { KeysScreen } from './screens/keys.tsx';
import { MembersScreen } from './screens/members.tsx';
import { OverviewScreen } from './screens/overview.tsx';
import { RunDetailScreen } from './screens/run-detail.tsx';
import { RunsScreen } from './screens/runs.tsx';
import { SettingsScreen } from './screens/settings.tsx';
import { SpendingScreen } from './screens/spending.tsx';
import { type SignInNotice, SignIn } from './screens/sign-in.tsx';
import { TryScreen } from './screens/try.tsx';
import { WebhooksScreen } from './screens/webhooks.tsx';
import { IntegrationsScreen } from './screens/integrations.tsx';
import { isAdmin, readSession, type Session, SessionCtx } from './session.ts';
import { useSessionWatch } from './session-watch.ts';
import { ErrorNote } from './ui.tsx';

interface Screen {
  path: string;
  title: string;
  admin: boolean;
  /** Shown to owners alone (the API refuses the others in any case). */
  owner?: boolean;
}

const SCREENS: Screen[] = [
  { path: '', title: 'Overview', admin: false },
  { path: '/runs', title: 'Runs', admin: false },
  { path: '/try', title: 'Try an agent', admin: false },
  { path: '/approvals', title: 'Approvals', admin: false },
  { path: '/drafts', title: 'Drafts', admin: false },
  { path: '/agents', title: 'Agents', admin: false },
  { path: '/keys', title: 'API keys', admin: true },
  { path: '/webhooks', title: 'Webhooks', admin: true },
  { path: '/integrations', title: 'Integrations', admin: true },
  { path: '/spending', title: 'Spending', admin: true },
  { path: '/members', title: 'Members', admin: true },
  { path: '/audit', title: 'Audit', admin: true },
  { path: '/settings', title: 'Settings', admin: true, owner: true },
];

type State = { phase: 'restoring' } | { phase: 'signed-out'; notice?: SignInNotice } | { phase: 'signed-in'; session: Session };

export function App() {
  const [state, setState] = useState<State>({ phase: 'restoring' });
  const session = state.phase === 'signed-in' ? state.session : undefined;
  const route = useRoute();

  useEffect(() => {
    readSession().then(
      (restored) => setState(restored ? { phase: 'signed-in', session: restored } : { phase: 'signed-out' }),
      (error: unknown) => setState({ phase: 'signed-out', notice: { kind: 'error', error } }),
    );
  }, []);

  useSessionWatch(session, {
    ended(reason) {
      setCsrfToken(undefined);
      setState({ phase: 'signed-out', notice: { kind: reason } });
    },
    refreshed(next) {
      setState((now) => (now.phase === 'signed-in' && sameSession(now.session, next) ? now : { phase: 'signed-in', session: next }));
    },
  });

  function setSession(next: Session | undefined) {
    setState(next ? { phase: 'signed-in', session: next } : { phase: 'signed-out' });
  }

  // An invitation's or a reset's link opens its own page, signed in or not; it signs the person in at its end.
  const link = linkScreen(route, (next) => {
    setSession(next);
    navigate('');
  });
  if (link) return link;
  if (state.phase === 'restoring')
    return (
      <main class="signin" id="main" aria-busy="true">
        <p role="status">Opening the panel…</p>
      </main>
    );
  if (state.phase === 'signed-out') return <SignIn onSignedIn={setSession} notice={state.notice} />;
  return (
    <SessionCtx.Provider value={{ session: state.session, setSession }}>
      <Shell session={state.session} setSession={setSession} />
    </SessionCtx.Provider>
  );
}

/** What a screen shows of the session: a session read again with nothing changed is kept as it is. */
function sameSession(a: Session, b: Session): boolean {
  return a.workspaceId === b.workspaceId && a.role === b.role && a.expiresAt === b.expiresAt && JSON.stringify(a.workspaces) === JSON.stringify(b.workspaces);
}

function Shell({ session, setSession }: { session: Session; setSession(next: Session | undefined): void }) {
  const route = useRoute();
  const [error, setError] = useState<unknown>(undefined);
  const admin = isAdmin(session);
  const owner = session.role === 'owner';
  const visible = SCREENS.filter((s) => (admin || !s.admin) && (owner || !s.owner));
  // A run, a draft or an agent's configuration is shown under its list's entry.
  const screen = visible.find((s) => s.path === route) ?? visible.find((s) => s.path !== '' && route.startsWith(`${s.path}/`));

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
        {render(route, admin, owner)}
      </main>
    </div>
  );
}

function render(route: string, admin: boolean, owner: boolean) {
  if (route.startsWith('/runs/')) return <RunDetailScreen runId={decodeURIComponent(route.slice('/runs/'.length))} />;
  if (route.startsWith('/drafts/')) return <DraftScreen draftId={decodeURIComponent(route.slice('/drafts/'.length))} />;
  if (route.startsWith('/agents/')) return <AgentConfigurationScreen slug={decodeURIComponent(route.slice('/agents/'.length))} />;
  switch (route) {
    case '':
      return <OverviewScreen />;
    case '/runs':
      return <RunsScreen />;
    case '/try':
      return <TryScreen />;
    case '/approvals':
      return <ApprovalsScreen />;
    case '/drafts':
      return <DraftsScreen />;
    case '/agents':
      return <AgentsScreen />;
    case '/keys':
      return admin ? <KeysScreen /> : <NotForRole />;
    case '/webhooks':
      return admin ? <WebhooksScreen /> : <NotForRole />;
    case '/integrations':
      return admin ? <IntegrationsScreen /> : <NotForRole />;
    case '/members':
      return admin ? <MembersScreen /> : <NotForRole />;
    case '/spending':
      return admin ? <SpendingScreen /> : <NotForRole />;
    case '/audit':
      return admin ? <AuditScreen /> : <NotForRole />;
    case '/settings':
      return owner ? <SettingsScreen /> : <NotForRole />;
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

/**
 * @module Settings (owners only): the workspace's single sign-on with its OpenID Connect identity provider
 * (`/workspace/sso`): issuer, client id and secret (never shown again once saved), the email domains it signs in,
 * whether a new person of those domains becomes a member (and with which role), whether members must use it. Shows
 * the redirect URI to register at the provider, on this panel's address.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, csrfHeader, ok, type Schemas } from '../api.ts';
import { ConfirmButton, ErrorNote, Field, Time, useLoad } from '../ui.tsx';

export function SettingsScreen() {
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <SingleSignOnSettings />
    </section>
  );
}

function SingleSignOnSettings() {
  // 404: none set up yet, the form starts empty.
  const current = useLoad(
    () =>
      ok(api.GET('/workspace/sso', {})).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      }),
    [],
  );
  const [error, setError] = useState<unknown>(undefined);
  const [saved, setSaved] = useState(false);
  const settings = current.data;

  async function save(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const secret = String(form.get('clientSecret') ?? '');
    const body: Schemas['SsoSettingsUpdate'] = {
      issuer: String(form.get('issuer')).trim(),
      clientId: String(form.get('clientId')).trim(),
      ...(secret ? { clientSecret: secret } : {}),
      allowedDomains: String(form.get('allowedDomains'))
        .split(/[\s,]+/)
        .filter(Boolean),
      jitMembership: form.get('jitMembership') === 'on',
      defaultRole: form.get('defaultRole') === 'admin' ? 'admin' : 'member',
      ssoRequired: form.get('ssoRequired') === 'on',
    };
    setError(undefined);
    setSaved(false);
    try {
      await ok(api.PUT('/workspace/sso', { params: { header: csrfHeader() }, body }));
      setSaved(true);
      current.reload();
    } catch (err) {
      setError(err);
    }
  }

  async function turnOff() {
    setError(undefined);
    setSaved(false);
    try {
      await ok(api.DELETE('/workspace/sso', { params: { header: csrfHeader() } }));
      current.reload();
    } catch (err) {
      setError(err);
    }
  }

  if (current.loading && current.data === undefined) return <p role="status">Loading single sign-on…</p>;
  return (
    <section aria-labelledby="sso-settings-title">
      <h2 id="sso-settings-title">Single sign-on (SSO)</h2>
      <ErrorNote error={current.error} />
      <p class="muted">
        Members sign in with your identity provider (OpenID Connect). Register this redirect URI with it:{' '}
        <code>{`${window.location.origin}${settings?.redirectPath ?? '/panel/sso/callback'}`}</code>
      </p>
      {settings ? (
        <p role="status">
          Single sign-on is on since its last change <Time iso={settings.updatedAt} />
          {settings.ssoRequired ? '; members must use it.' : '.'}
        </p>
      ) : (
        <p role="status">Single sign-on is off.</p>
      )}
      <form onSubmit={save} key={settings?.updatedAt ?? 'none'} aria-label="Single sign-on settings">
        <Field label="Issuer URL" hint="https:// — its discovery document is read from /.well-known/openid-configuration">
          <input name="issuer" type="url" required defaultValue={settings?.issuer ?? ''} />
        </Field>
        <Field label="Client ID">
          <input name="clientId" required defaultValue={settings?.clientId ?? ''} />
        </Field>
        <Field label="Client secret" hint={settings ? 'Stored and never shown again; leave empty to keep it.' : 'Sealed at rest and never shown again.'}>
          <input name="clientSecret" type="password" autoComplete="off" required={!settings} />
        </Field>
        <Field label="Allowed email domains" hint="Separated by spaces or commas, e.g. northwind.example">
          <input name="allowedDomains" required defaultValue={settings?.allowedDomains.join(' ') ?? ''} />
        </Field>
        <label class="inline">
          <input name="jitMembership" type="checkbox" defaultChecked={settings?.jitMembership ?? false} />
          <span>Make a person of these domains a member at their first sign-in</span>
        </label>
        <Field label="Role of new members">
          <select name="defaultRole" defaultValue={settings?.defaultRole ?? 'member'}>
            <option value="member">member</option>
            <option value="admin">admin</option>
          </select>
        </Field>
        <label class="inline">
          <input name="ssoRequired" type="checkbox" defaultChecked={settings?.ssoRequired ?? false} />
          <span>Require single sign-on for members (owners keep their password as the way back in)</span>
        </label>
        <div class="actions">
          <button type="submit" class="primary">
            Save single sign-on
          </button>
          {settings ? (
            <ConfirmButton
              label="Turn single sign-on off"
              confirmLabel="Turn it off"
              question="Members will sign in with their passwords again. Open sessions stay open."
              onConfirm={turnOff}
              danger
            />
          ) : null}
        </div>
        {saved ? <p role="status">Saved.</p> : null}
        <ErrorNote error={error} />
      </form>
    </section>
  );
}

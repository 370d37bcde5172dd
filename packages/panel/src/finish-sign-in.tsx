/**
 * @module The last step of an invitation or a reset link: a new two-step secret, shown as a QR code and as text for an
 * authenticator app, then the six-digit code it shows, which completes the link (`confirm`: the same request again
 * with `totpCode`; until then the server changed nothing and the link shows the same secret again), and the person is
 * signed in with that code.
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { QrCode } from './qr-code.tsx';
import type { Session } from './session.ts';
import { signInWith } from './sign-in-with.ts';
import { ErrorNote, Field } from './ui.tsx';

/** The name authenticator apps list the account under. */
const ISSUER = 'Agent Invocation Service';

/** The Key URI authenticator apps read from a QR code (otpauth://totp/…; SHA-1, 6 digits, 30 s: what the server checks). */
export function otpauthUri(email: string, secret: string): string {
  const label = `${encodeURIComponent(ISSUER)}:${encodeURIComponent(email)}`;
  return `otpauth://totp/${label}?secret=${secret}&issuer=${encodeURIComponent(ISSUER)}&algorithm=SHA1&digits=6&period=30`;
}

export function FinishSignIn(props: {
  email: string;
  password: string;
  /** A new secret to set up (null: the authenticator app already has the account's). */
  totpSecret: string | null;
  workspaceId?: string;
  /** Completes the link with the first code of the new secret (before signing in with it). */
  confirm?(totpCode: string): Promise<unknown>;
  onSignedIn(session: Session): void;
}) {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  /** The link is completed once; a sign-in that fails after it is tried again alone. */
  const confirmed = useRef(false);

  async function submit(event: Event) {
    event.preventDefault();
    const code = String(new FormData(event.currentTarget as HTMLFormElement).get('totpCode'));
    setBusy(true);
    setError(undefined);
    try {
      if (props.confirm && !confirmed.current) {
        await props.confirm(code);
        confirmed.current = true;
      }
      props.onSignedIn(await signInWith({ email: props.email, password: props.password, totpCode: code }, props.workspaceId));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      {props.totpSecret ? <TwoStepSecret email={props.email} secret={props.totpSecret} /> : null}
      <form onSubmit={submit} aria-labelledby="finish-title">
        <h2 id="finish-title">Sign in</h2>
        <p class="muted">
          {props.totpSecret
            ? 'Enter the six-digit code your authenticator app now shows for this account.'
            : 'Enter the six-digit code of your authenticator app to sign in.'}
        </p>
        <Field label="Six-digit code">
          <input
            name="totpCode"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9]{6}"
            maxLength={6}
            required
            title="The six digits of your authenticator app"
          />
        </Field>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error instanceof ApiError && error.code === 'not_authenticated' ? (
          <div class="error" role="alert">
            <strong>The code is wrong or was already used.</strong> Codes change every 30 seconds and each is accepted once: wait for the next code and try
            again.
          </div>
        ) : (
          <ErrorNote error={error} />
        )}
      </form>
    </>
  );
}

function TwoStepSecret({ email, secret }: { email: string; secret: string }) {
  const grouped = secret.match(/.{1,4}/g)?.join(' ') ?? secret;
  return (
    <section class="card" aria-labelledby="two-step-title">
      <h2 id="two-step-title">Set up two-step verification</h2>
      <p class="muted">Nothing changes until you enter the first code: if you leave before, open the link again and it shows this same secret.</p>
      <ol>
        <li>Open an authenticator app on your phone and add an account.</li>
        <li>Scan this QR code, or type the secret below.</li>
        <li>Enter the six-digit code the app shows.</li>
      </ol>
      <QrCode text={otpauthUri(email, secret)} label={`QR code of the two-step secret for ${email}`} />
      <Field label="Two-step secret" hint="Base32; the spaces are only for reading">
        <textarea readOnly rows={2} value={grouped} class="mono two-step-secret" onFocus={(e) => e.currentTarget.select()} />
      </Field>
    </section>
  );
}

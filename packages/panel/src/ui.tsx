/**
 * @module Small shared pieces: loading data, showing an API error with its request id, confirming a
 * destructive action, showing a secret once.
 */
import { type ComponentChildren, cloneElement, type VNode } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

/** Runs `load` now and again on reload(); keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!live) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        if (!live) return;
        setError(err);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/** The API's error body in words, with the request id for support and the wait when there is one. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const err = error instanceof ApiError ? error : undefined;
  return (
    <div class="error" role="alert">
      <strong>{err ? err.message : 'Something went wrong.'}</strong>
      {err && err.code === 'too_many_attempts' && err.retryAfterSec ? <span> Try again in {waitText(err.retryAfterSec)}.</span> : null}
      {err && (
        <small>
          {' '}
          <code>{err.code}</code>
          {err.requestId ? (
            <>
              {' '}
              · request id <code>{err.requestId}</code>
            </>
          ) : null}
        </small>
      )}
    </div>
  );
}

export function waitText(seconds: number): string {
  if (seconds < 90) return `${seconds} seconds`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/**
 * A destructive action asks once more, inline, before it runs. `label` is the button's accessible name; `text`, when
 * given, the shorter words it shows (they must begin the label, so that a spoken command finds it).
 */
export function ConfirmButton(props: { label: string; text?: string; confirmLabel: string; question: string; onConfirm(): unknown; danger?: boolean }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button type="button" class={props.danger ? 'danger' : ''} aria-label={props.text ? props.label : undefined} onClick={() => setAsking(true)}>
        {props.text ?? props.label}
      </button>
    );
  return (
    <fieldset class="confirm">
      <legend>{props.question}</legend>
      <button
        type="button"
        ref={confirmRef}
        class={props.danger ? 'danger' : 'primary'}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            await props.onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        {props.confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </fieldset>
  );
}

/**
 * A secret the server shows only once: a copy button and a warning. `after` says what to do once it is gone
 * (by default: the panel shows only its prefix).
 */
export function SecretOnce({ label, secret, after, children }: { label: string; secret: string; after?: string; children?: ComponentChildren }) {
  const [copied, setCopied] = useState(false);
  const id = `secret-${label.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <section class="secret" aria-label={label}>
      <p class="warning">
        <strong>Copy this secret now.</strong> It is shown only once; afterwards {after ?? 'the panel shows only its prefix'}.
      </p>
      <label for={id}>{label}</label>
      <div class="row">
        <input id={id} readOnly value={secret} class="mono" onFocus={(e) => e.currentTarget.select()} />
        <button
          type="button"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(secret);
              setCopied(true);
            } catch {
              setCopied(false);
            }
          }}
        >
          Copy
        </button>
      </div>
      <p aria-live="polite" class="muted">
        {copied ? 'Copied to the clipboard.' : ''}
      </p>
      {children}
    </section>
  );
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

export function Badge({ tone, children }: { tone: string; children: ComponentChildren }) {
  return <span class={`badge badge-${tone}`}>{children}</span>;
}

/** A labelled control: the label names the one child control by its id (an explicit label). */
export function Field(props: { label: string; children: VNode<{ id?: string }>; hint?: string }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {cloneElement(props.children, { id })}
      {props.hint ? <small class="muted">{props.hint}</small> : null}
    </div>
  );
}

const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });
const LOCAL = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 30],
  ['month', 12],
  ['year', Number.POSITIVE_INFINITY],
];

/** "3 min. ago" (the viewer's language), from a time and now. */
export function relativeTime(iso: string, now = Date.now()): string {
  let value = (Date.parse(iso) - now) / 1000;
  for (const [unit, size] of STEPS) {
    if (Math.abs(value) < size) return RELATIVE.format(Math.round(value), unit);
    value /= size;
  }
  return RELATIVE.format(Math.round(value), 'year');
}

/** A time in the viewer's time zone and relative to now, the UTC time on hover (and for assistive technology). */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso || Number.isNaN(Date.parse(iso))) return <span>—</span>;
  return (
    <time dateTime={iso} title={when(iso)}>
      {LOCAL.format(new Date(iso))} <span class="muted">({relativeTime(iso)})</span>
    </time>
  );
}

/** How long from `from` to `to`: "0.4 s", "12 s", "3 min 05 s". */
export function duration(from: string, to: string): string {
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/**
 * A form behind the button that opens it, not always open above the list: the button (`aria-expanded="false"`), or,
 * once pressed, what `children` draws with the function that closes it again (after a create, or its Cancel).
 */
export function BehindButton({ label, primary, children }: { label: string; primary?: boolean; children: (close: () => void) => ComponentChildren }) {
  const [open, setOpen] = useState(false);
  const close = useCallback(() => setOpen(false), []);
  if (open) return <>{children(close)}</>;
  return (
    <p>
      <button type="button" class={primary ? 'primary' : ''} aria-expanded="false" onClick={() => setOpen(true)}>
        {label}
      </button>
    </p>
  );
}

/** The Cancel of a form behind its button. */
export function CancelButton({ onClick }: { onClick: () => void }) {
  return (
    <button type="button" onClick={onClick}>
      Cancel
    </button>
  );
}

/**
 * A date filter's UTC days (`YYYY-MM-DD`, either may be empty) as instants: the start of `from`'s day, and the start
 * of the day after `to` (so the whole `to` day is in).
 */
export function utcDayBounds(from: string, to: string): { start: string | undefined; end: string | undefined } {
  return {
    start: from ? `${from}T00:00:00Z` : undefined,
    end: to ? new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString() : undefined,
  };
}

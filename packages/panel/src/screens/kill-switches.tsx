/**
 * @module Kill-switch state (per run, hour, day and the manual one) in words; with `manage` (the Spending settings
 * screen, owners and admins), the manual switch, engaged only after a confirmation that names its consequence.
 */
import { useState } from 'preact/hooks';
import { api, csrfHeader, ok, type Schemas } from '../api.ts';
import { isAdmin, useSession } from '../session.ts';
import { navigate } from '../router.ts';
import { Badge, ErrorNote, Field, useLoad, when } from '../ui.tsx';

const KINDS: { key: 'run' | 'hour' | 'day' | 'manual'; words: string }[] = [
  { key: 'manual', words: 'Manual switch' },
  { key: 'hour', words: 'Hourly budget' },
  { key: 'day', words: 'Daily budget' },
  { key: 'run', words: 'Per-run limit' },
];

export function KillSwitches({ manage = false }: { manage?: boolean }) {
  const { session } = useSession();
  const switches = useLoad(() => ok(api.GET('/kill-switches', {})), []);
  const [error, setError] = useState<unknown>(undefined);

  async function setManual(engaged: boolean, reason?: string) {
    setError(undefined);
    try {
      await ok(api.PUT('/kill-switches/manual', { params: { header: csrfHeader() }, body: reason ? { engaged, reason } : { engaged } }));
      switches.reload();
    } catch (err) {
      setError(err);
    }
  }

  const s = switches.data;
  return (
    <section aria-labelledby="kill-title">
      <h2 id="kill-title">Kill switches</h2>
      <ErrorNote error={error ?? switches.error} />
      {s ? (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Spending kill switches</caption>
            <thead>
              <tr>
                <th scope="col">Switch</th>
                <th scope="col">State</th>
                <th scope="col">Spent / limit (STU)</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {KINDS.map(({ key, words }) => (
                <SwitchRow key={key} kind={key} words={words} item={s[key]} />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {s && manage && isAdmin(session) ? <ManualSwitch engaged={s.manual.engaged} onSet={setManual} /> : null}
      {!manage && isAdmin(session) ? (
        <p>
          The manual switch is in{' '}
          <a
            href="/panel/spending"
            onClick={(e) => {
              e.preventDefault();
              navigate('/spending');
            }}
          >
            Spending settings
          </a>
          .
        </p>
      ) : null}
    </section>
  );
}

/** A switch's state in words that cannot be misread: whether spending is stopped, not a coloured "off". */
function stateWords(kind: string, engaged: boolean): string {
  if (kind === 'manual') return engaged ? 'engaged: spending stopped' : 'not engaged';
  return engaged ? 'tripped: spending stopped' : 'not tripped';
}

function SwitchRow({ kind, words, item }: { kind: string; words: string; item: Schemas['KillSwitch'] }) {
  return (
    <tr>
      <th scope="row">{words}</th>
      <td>
        <Badge tone={item.engaged ? 'red' : 'grey'}>{stateWords(kind, item.engaged)}</Badge>
        {item.reason ? <span class="muted"> {item.reason}</span> : null}
      </td>
      <td>{item.limitStu === null ? '—' : `${(item.spentStu ?? 0).toLocaleString('en-US')} / ${item.limitStu.toLocaleString('en-US')}`}</td>
      <td>{when(item.since)}</td>
    </tr>
  );
}

function ManualSwitch({ engaged, onSet }: { engaged: boolean; onSet(engaged: boolean, reason?: string): Promise<void> }) {
  const [asking, setAsking] = useState<string | undefined>(undefined);
  if (engaged)
    return (
      <button type="button" class="primary" onClick={() => onSet(false)}>
        Turn the manual switch off
      </button>
    );
  return (
    <form
      class="card"
      onSubmit={(e) => {
        e.preventDefault();
        setAsking(String(new FormData(e.currentTarget).get('reason') ?? '').trim());
      }}
    >
      <h3>Stop all spending</h3>
      <p class="muted">New invocations are refused with 429 kill_switch until the switch is turned off.</p>
      <Field label="Reason (optional)">
        <input name="reason" maxLength={200} />
      </Field>
      {asking === undefined ? (
        <button type="submit" class="danger">
          Engage the manual switch
        </button>
      ) : (
        <fieldset class="confirm">
          <legend>
            Stop all spending in this workspace? Every new invocation, from keys, the panel and inbound events, is refused until the switch is turned off, and a
            run in progress that would complete fails.
          </legend>
          <button type="button" class="danger" onClick={() => onSet(true, asking || undefined).finally(() => setAsking(undefined))}>
            Stop all spending now
          </button>
          <button type="button" onClick={() => setAsking(undefined)}>
            Keep spending
          </button>
        </fieldset>
      )}
    </form>
  );
}

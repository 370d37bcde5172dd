import { describe, expect, it } from 'vitest';
import { MAX_TOOL_NAME, selectedName, TOOL_NAME, toolName } from './tool-name.ts';
import { toCachedTools } from '../integrations/tool-names.ts';

describe('the naming rule of tools', () => {
  it('makes every name fit the contract', () => {
    expect(
      [
        ['crm', 'send-email'],
        ['crm', 'getContact'],
        ['crm', 'search.v2'],
        ['crm', '2fa-reset'],
        ['help-desk', 'Draft Reply'],
        ['365-mail', '_private'],
        ['crm', 'émettre'],
      ].map(([area, tool]) => toolName(area!, tool!)),
    ).toEqual(['crm.send_email', 'crm.getcontact', 'crm.search_v2', 'crm.t_2fa_reset', 'help_desk.draft_reply', 't_365_mail.t__private', 'crm.t__mettre']);
  });

  it('keeps a name that fits as it is', () => {
    for (const name of ['draft.create', 'crm.lookup_contact', 'email.send']) {
      const [area, tool] = name.split('.');
      expect(toolName(area!, tool!)).toBe(name);
      expect(selectedName(name)).toBe(name);
    }
    expect(selectedName('crm')).toBe('crm');
    expect(selectedName('help-desk')).toBe('help_desk');
    expect(selectedName('help-desk.send-email')).toBe('help_desk.send_email');
  });

  it("stays within IntegrationTool.name's 97 characters with the longest integration name that needs a prefix", () => {
    const name = toolName(`9${'a'.repeat(31)}`, `Z${'-x'.repeat(100)}`);
    expect(name).toMatch(TOOL_NAME);
    expect(name).toHaveLength(MAX_TOOL_NAME);
    expect(name.startsWith(`t_9${'a'.repeat(31)}.z_x`)).toBe(true);
  });

  it('offers the first of the tools that come out alike and names the others', () => {
    const schema = { type: 'object' };
    const { tools, collisions } = toCachedTools('crm', [
      { name: 'send-email', inputSchema: schema },
      { name: 'send_email', inputSchema: schema },
      { name: 'SEND.EMAIL', inputSchema: schema },
      { name: '---', inputSchema: schema },
      { name: 'getContact', inputSchema: schema, annotations: { readOnlyHint: true } },
    ]);
    expect(tools.map((tool) => [tool.name, tool.mcpName, tool.readOnly])).toEqual([
      ['crm.send_email', 'send-email', false],
      ['crm.getcontact', 'getContact', true],
    ]);
    expect(collisions).toEqual([
      { name: 'crm.send_email', mcpName: 'send_email' },
      { name: 'crm.send_email', mcpName: 'SEND.EMAIL' },
    ]);
  });
});

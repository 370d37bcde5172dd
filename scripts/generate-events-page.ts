/**
 * @module Step 7 of `pnpm generate`: generated/docs/events.html, a readable page of the AsyncAPI document
 * (outbound deliveries, the invocation SSE stream, the MCP bridge's SSE transport): channels, operations and
 * messages with their headers, payload schemas and examples. Plain HTML and inline CSS, no script, so it
 * works offline. A small renderer of our own, because the AsyncAPI generator is a very heavy install.
 */
import { access } from 'node:fs/promises';
import { Parser, fromFile } from '@asyncapi/parser';
import { ASYNCAPI_ROOT, type Json, headerLines, writeGenerated } from './generate-common.ts';
import { assertSelfContained } from './generate-docs.ts';

/** Writes the page and returns true, or returns false when asyncapi/asyncapi.yaml does not exist yet. */
export async function generateEventsPage(): Promise<boolean> {
  try {
    await access(ASYNCAPI_ROOT);
  } catch {
    return false;
  }
  const { document, diagnostics } = await fromFile(new Parser(), ASYNCAPI_ROOT).parse();
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 0);
  if (!document || errors.length) {
    const detail = errors.map((error) => `${error.path.join('.') || '(root)'}: ${error.message}`).join('\n  ');
    throw new Error(`asyncapi/asyncapi.yaml does not validate:\n  ${detail}`);
  }
  const html = renderPage(document.json());
  assertSelfContained(html, 'docs/events.html');
  await writeGenerated('docs/events.html', html);
  return true;
}

/** Renders the resolved document (references already inlined by the parser). */
export function renderPage(doc: Json): string {
  const title = doc.info?.title ?? 'Events';
  const channels = Object.entries<Json>(doc.channels ?? {});
  const operations = Object.entries<Json>(doc.operations ?? {});
  const messages = collectMessages(doc);
  const servers = Object.entries<Json>(doc.servers ?? {});

  const body = [
    `<header><h1>${esc(title)}</h1><p class="meta">AsyncAPI ${esc(doc.asyncapi ?? '')} · version ${esc(doc.info?.version ?? '')}</p>`,
    doc.info?.description ? `<div class="prose">${markdown(doc.info.description)}</div>` : '',
    '</header>',
    '<nav><h2>Contents</h2><ul>',
    servers.length ? '<li><a href="#servers">Servers</a></li>' : '',
    `<li><a href="#operations">Operations</a><ul>${operations.map(([id, op]) => `<li><a href="#${anchor('operation', id)}">${esc(id)}</a> <span class="badge ${esc(op.action)}">${esc(op.action)}</span></li>`).join('')}</ul></li>`,
    `<li><a href="#channels">Channels</a><ul>${channels.map(([id, channel]) => `<li><a href="#${anchor('channel', id)}">${esc(id)}</a> <code>${esc(channel.address ?? '')}</code></li>`).join('')}</ul></li>`,
    `<li><a href="#messages">Messages</a><ul>${messages.map((message) => `<li><a href="#${anchor('message', message.key)}">${esc(message.label)}</a></li>`).join('')}</ul></li>`,
    '</ul></nav><main>',
    servers.length ? renderServers(servers) : '',
    '<section id="operations"><h2>Operations</h2>',
    ...operations.map(([id, op]) => renderOperation(id, op, doc, messages)),
    '</section><section id="channels"><h2>Channels</h2>',
    ...channels.map(([id, channel]) => renderChannel(id, channel, messages)),
    '</section><section id="messages"><h2>Messages</h2>',
    ...messages.map(renderMessage),
    '</section></main>',
  ].join('\n');

  return [
    '<!DOCTYPE html>',
    `<!-- ${headerLines('generate-events-page.ts', 'asyncapi/asyncapi.yaml (@asyncapi/parser)').join(' ')} -->`,
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head><body>',
    body,
    '</body></html>',
  ].join('\n');
}

interface MessageEntry {
  key: string;
  label: string;
  channel: string;
  message: Json;
}

/** Every message of every channel, in document order; the key is `<channel>/<message>`. */
function collectMessages(doc: Json): MessageEntry[] {
  const entries: MessageEntry[] = [];
  for (const [channelId, channel] of Object.entries<Json>(doc.channels ?? {})) {
    for (const [messageId, message] of Object.entries<Json>(channel.messages ?? {})) {
      entries.push({ key: `${channelId}/${messageId}`, label: `${channelId} · ${message.name ?? messageId}`, channel: channelId, message });
    }
  }
  return entries;
}

/** The entry of a message object reached from an operation (the parser inlines it, so match by identity). */
function findMessage(message: Json, messages: MessageEntry[]): MessageEntry | undefined {
  return messages.find((entry) => entry.message === message) ?? messages.find((entry) => sameId(entry.message, message));
}

function sameId(a: Json, b: Json): boolean {
  const id = (value: Json) => value?.['x-parser-message-name'] ?? value?.name;
  return id(a) !== undefined && id(a) === id(b);
}

function channelIdOf(channel: Json, doc: Json): string | undefined {
  return Object.entries<Json>(doc.channels ?? {}).find(([, candidate]) => candidate === channel)?.[0];
}

function renderServers(servers: [string, Json][]): string {
  const rows = servers
    .map(
      ([id, server]) =>
        `<tr><td>${esc(id)}</td><td>${esc(server.protocol ?? '')}</td><td><code>${esc(`${server.host ?? ''}${server.pathname ?? ''}`)}</code></td><td>${markdown(server.description ?? '')}</td></tr>`,
    )
    .join('');
  return `<section id="servers"><h2>Servers</h2><table><tr><th>Server</th><th>Protocol</th><th>Host</th><th>Description</th></tr>${rows}</table></section>`;
}

function renderOperation(id: string, op: Json, doc: Json, messages: MessageEntry[]): string {
  const channelId = channelIdOf(op.channel, doc);
  const list = (op.messages ?? []).map((message: Json) => {
    const entry = findMessage(message, messages);
    return entry ? `<li><a href="#${anchor('message', entry.key)}">${esc(entry.label)}</a></li>` : `<li>${esc(message?.name ?? 'message')}</li>`;
  });
  return [
    `<article id="${anchor('operation', id)}"><h3>${esc(id)} <span class="badge ${esc(op.action)}">${esc(op.action)}</span></h3>`,
    op.title ? `<p><strong>${esc(op.title)}</strong></p>` : '',
    op.summary ? `<p class="summary">${inline(op.summary)}</p>` : '',
    op.description ? `<div class="prose">${markdown(op.description)}</div>` : '',
    channelId ? `<p>Channel: <a href="#${anchor('channel', channelId)}">${esc(channelId)}</a> <code>${esc(op.channel?.address ?? '')}</code></p>` : '',
    list.length ? `<p>Messages:</p><ul>${list.join('')}</ul>` : '',
    op.reply ? `<h4>Reply</h4>${renderJson(op.reply)}` : '',
    op.bindings ? `<h4>Bindings</h4>${renderJson(op.bindings)}` : '',
    '</article>',
  ].join('\n');
}

function renderChannel(id: string, channel: Json, messages: MessageEntry[]): string {
  const parameters = Object.entries<Json>(channel.parameters ?? {});
  const own = messages.filter((entry) => entry.channel === id);
  return [
    `<article id="${anchor('channel', id)}"><h3>${esc(id)}</h3>`,
    `<p>Address: <code>${esc(channel.address ?? '(dynamic)')}</code></p>`,
    channel.title ? `<p><strong>${esc(channel.title)}</strong></p>` : '',
    channel.summary ? `<p class="summary">${inline(channel.summary)}</p>` : '',
    channel.description ? `<div class="prose">${markdown(channel.description)}</div>` : '',
    parameters.length
      ? `<h4>Parameters</h4><ul>${parameters.map(([name, parameter]) => `<li><code>${esc(name)}</code> ${markdown(parameter?.description ?? '')}</li>`).join('')}</ul>`
      : '',
    own.length ? `<p>Messages:</p><ul>${own.map((entry) => `<li><a href="#${anchor('message', entry.key)}">${esc(entry.label)}</a></li>`).join('')}</ul>` : '',
    channel.bindings ? `<h4>Bindings</h4>${renderJson(channel.bindings)}` : '',
    '</article>',
  ].join('\n');
}

function renderMessage(entry: MessageEntry): string {
  const { message } = entry;
  const examples: Json[] = message.examples ?? [];
  return [
    `<article id="${anchor('message', entry.key)}"><h3>${esc(entry.label)}</h3>`,
    message.title ? `<p><strong>${esc(message.title)}</strong></p>` : '',
    message.summary ? `<p class="summary">${inline(message.summary)}</p>` : '',
    message.description ? `<div class="prose">${markdown(message.description)}</div>` : '',
    message.contentType ? `<p>Content type: <code>${esc(message.contentType)}</code></p>` : '',
    message.correlationId
      ? `<p>Correlation id: <code>${esc(message.correlationId.location ?? '')}</code> ${inline(message.correlationId.description ?? '')}</p>`
      : '',
    message.headers ? `<h4>Headers</h4>${renderSchema(message.headers)}` : '',
    message.payload ? `<h4>Payload</h4>${renderSchema(message.payload)}` : '',
    ...examples.map((example, index) =>
      [
        `<h4>Example: ${esc(example.name ?? String(index + 1))}</h4>`,
        example.summary ? `<p>${inline(example.summary)}</p>` : '',
        example.headers ? `<p>Headers</p>${renderJson(example.headers)}` : '',
        example.payload !== undefined ? `<p>Payload</p>${renderJson(example.payload)}` : '',
      ].join('\n'),
    ),
    message.bindings ? `<h4>Bindings</h4>${renderJson(message.bindings)}` : '',
    '</article>',
  ].join('\n');
}

/** A schema as a tree of properties with their type, constraints and description, plus the raw JSON. */
function renderSchema(schema: Json): string {
  return `<div class="schema">${schemaNode(schema, new Set())}</div><details><summary>JSON Schema</summary>${renderJson(schema)}</details>`;
}

function schemaNode(schema: Json, seen: Set<Json>): string {
  if (!schema || typeof schema !== 'object') return `<span class="type">${esc(String(schema))}</span>`;
  if (seen.has(schema)) return '<span class="type">(recursive)</span>';
  const inner = new Set(seen).add(schema);
  const parts = [`<span class="type">${esc(typeLabel(schema))}</span>`];
  const rules = constraints(schema);
  if (rules.length) parts.push(`<span class="rules">${rules.map(esc).join(' · ')}</span>`);
  if (schema.description) parts.push(`<div class="prose">${markdown(schema.description)}</div>`);
  const properties = Object.entries<Json>(schema.properties ?? {});
  if (properties.length) {
    const required = new Set<string>(schema.required ?? []);
    parts.push(
      `<ul>${properties
        .map(
          ([name, property]) =>
            `<li><code class="name">${esc(name)}</code>${required.has(name) ? ' <span class="req">required</span>' : ''} ${schemaNode(property, inner)}</li>`,
        )
        .join('')}</ul>`,
    );
  }
  if (schema.items) parts.push(`<ul><li>items: ${schemaNode(schema.items, inner)}</li></ul>`);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    parts.push(`<ul><li>other keys: ${schemaNode(schema.additionalProperties, inner)}</li></ul>`);
  }
  for (const keyword of ['oneOf', 'anyOf', 'allOf'] as const) {
    if (Array.isArray(schema[keyword])) {
      parts.push(`<p>${keyword}:</p><ol>${schema[keyword].map((item: Json) => `<li>${schemaNode(item, inner)}</li>`).join('')}</ol>`);
    }
  }
  return parts.join(' ');
}

function typeLabel(schema: Json): string {
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : schema.type;
  const base = type ?? (schema.oneOf ? 'one of' : schema.anyOf ? 'any of' : schema.allOf ? 'all of' : 'any');
  const format = schema.format ? ` (${schema.format})` : '';
  const title = schema.title ? `${schema.title}: ` : '';
  return `${title}${base}${format}`;
}

function constraints(schema: Json): string[] {
  const rules: string[] = [];
  if (schema.const !== undefined) rules.push(`= ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum)) rules.push(`one of ${schema.enum.map((value: unknown) => JSON.stringify(value)).join(', ')}`);
  const pairs: [string, string][] = [
    ['minLength', 'min length'],
    ['maxLength', 'max length'],
    ['minimum', '≥'],
    ['maximum', '≤'],
    ['exclusiveMinimum', '>'],
    ['exclusiveMaximum', '<'],
    ['minItems', 'min items'],
    ['maxItems', 'max items'],
    ['pattern', 'pattern'],
    ['default', 'default'],
  ];
  for (const [keyword, label] of pairs) {
    if (schema[keyword] !== undefined)
      rules.push(`${label} ${typeof schema[keyword] === 'string' && keyword !== 'pattern' ? JSON.stringify(schema[keyword]) : schema[keyword]}`);
  }
  if (schema.additionalProperties === false) rules.push('no other fields');
  return rules;
}

/** Pretty JSON without the parser's bookkeeping fields (`x-parser-*`). */
function renderJson(value: Json): string {
  const seen = new WeakSet<object>();
  const text = JSON.stringify(
    value,
    (key, inner) => {
      if (key.startsWith('x-parser-')) return undefined;
      if (inner && typeof inner === 'object') {
        if (seen.has(inner)) return '(recursive)';
        seen.add(inner);
      }
      return inner;
    },
    2,
  );
  return `<pre>${esc(text ?? '')}</pre>`;
}

function anchor(kind: string, id: string): string {
  return `${kind}-${id.replace(/[^A-Za-z0-9_-]+/g, '-')}`;
}

function esc(text: string): string {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Inline Markdown: code spans, bold, italics and links (http(s) and in-page only). */
function inline(text: string): string {
  return esc(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[\s(])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>')
    .replace(/\[([^\]]+)\]\(((?:https?:\/\/|#)[^)\s]+)\)/g, '<a href="$2">$1</a>');
}

/** Block Markdown: headings, paragraphs, bullet and numbered lists, tables and fenced code. */
function markdown(text: string): string {
  const blocks: string[] = [];
  const lines = String(text).replace(/\r\n/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.trim()) {
      i += 1;
      continue;
    }
    if (line.startsWith('```')) {
      const code: string[] = [];
      for (i += 1; i < lines.length && !lines[i]!.startsWith('```'); i += 1) code.push(lines[i]!);
      i += 1;
      blocks.push(`<pre>${esc(code.join('\n'))}</pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const level = Math.min(6, heading[1]!.length + 3);
      blocks.push(`<h${level}>${inline(heading[2]!)}</h${level}>`);
      i += 1;
      continue;
    }
    if (/^\s*\|/.test(line)) {
      const rows: string[][] = [];
      for (; i < lines.length && /^\s*\|/.test(lines[i]!); i += 1) {
        const cells = lines[i]!.trim()
          .replace(/^\||\|$/g, '')
          .split('|')
          .map((cell) => cell.trim());
        if (!cells.every((cell) => /^:?-+:?$/.test(cell))) rows.push(cells);
      }
      const [head, ...rest] = rows;
      blocks.push(
        `<table><tr>${(head ?? []).map((cell) => `<th>${inline(cell)}</th>`).join('')}</tr>${rest.map((row) => `<tr>${row.map((cell) => `<td>${inline(cell)}</td>`).join('')}</tr>`).join('')}</table>`,
      );
      continue;
    }
    const bullet = /^\s*(?:[-*]|\d+\.)\s+/;
    if (bullet.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items: string[] = [];
      for (; i < lines.length && lines[i]!.trim(); i += 1) {
        if (bullet.test(lines[i]!)) items.push(lines[i]!.replace(bullet, ''));
        else items[items.length - 1] += ` ${lines[i]!.trim()}`;
      }
      const tag = ordered ? 'ol' : 'ul';
      blocks.push(`<${tag}>${items.map((item) => `<li>${inline(item)}</li>`).join('')}</${tag}>`);
      continue;
    }
    const paragraph: string[] = [];
    for (; i < lines.length && lines[i]!.trim() && !bullet.test(lines[i]!) && !/^(#{1,6}\s|```|\s*\|)/.test(lines[i]!); i += 1) {
      paragraph.push(lines[i]!.trim());
    }
    blocks.push(`<p>${inline(paragraph.join(' '))}</p>`);
  }
  return blocks.join('\n');
}

const STYLE = `
body{font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2433;margin:0;display:grid;grid-template-columns:290px 1fr}
header{grid-column:1/3;padding:24px 32px;border-bottom:1px solid #e3e7ef;background:#f7f9fc}
h1{margin:0 0 4px}.meta{color:#5b6478;margin:0}
nav{padding:16px;border-right:1px solid #e3e7ef;font-size:14px;position:sticky;top:0;align-self:start;max-height:100vh;overflow:auto}
nav ul{padding-left:16px;margin:4px 0}nav h2{font-size:15px}
main{padding:8px 32px 64px;min-width:0}
section>h2{border-bottom:2px solid #1d2433;padding-bottom:4px;margin-top:40px}
article{border:1px solid #e3e7ef;border-radius:6px;padding:4px 20px 12px;margin:16px 0}
code{background:#eef1f6;padding:1px 4px;border-radius:3px;font-size:13px}
pre{background:#0f1420;color:#e6e9ef;padding:12px;border-radius:6px;overflow:auto;font-size:13px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #d5dae4;padding:4px 8px;text-align:left;vertical-align:top}
.badge{font-size:12px;padding:2px 8px;border-radius:10px;background:#dde3ee;text-transform:uppercase}
.badge.send{background:#d7f0dd}.badge.receive{background:#dbe7fb}
.schema ul{list-style:none;padding-left:18px;border-left:1px dashed #c8cfdb;margin:4px 0}
.schema li{margin:6px 0}.type{color:#6a3fb5;font-family:ui-monospace,monospace;font-size:13px}
.rules{color:#8a5a00;font-size:13px;margin-left:6px}.req{color:#b3261e;font-size:12px}
.schema .prose p{margin:2px 0;color:#3d4659}.summary{font-weight:600}
`;

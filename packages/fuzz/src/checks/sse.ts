/** @module Server-Sent Events parsing (the `text/event-stream` format) for checking streamed responses. */

export interface SseEvent {
  /** `message` when the event has no `event:` field. */
  event: string;
  data: string;
  id?: string;
}

export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    let event = 'message';
    const data: string[] = [];
    let id: string | undefined;
    let any = false;
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
      else continue;
      any = true;
    }
    if (any && data.length > 0) events.push({ event, data: data.join('\n'), id });
  }
  return events;
}

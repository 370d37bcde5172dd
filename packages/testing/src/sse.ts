/**
 * @module Test helper: parses a Server-Sent Events body into its events (name, parsed JSON data).
 */
export interface SseEvent {
  event: string;
  data: unknown;
}

export function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const { event, data } = sseBlock(block);
      return { event, data: JSON.parse(data) as unknown };
    });
}

/** Like parseSse, with each event's `id:` (undefined when it has none); comment-only blocks (`: keep-alive`) are skipped. */
export function parseSseWithIds(text: string): (SseEvent & { id: string | undefined })[] {
  return text
    .split('\n\n')
    .filter((block) => block.split('\n').some((line) => line.startsWith('data: ')))
    .map((block) => {
      const { event, data } = sseBlock(block);
      const id = block
        .split('\n')
        .find((l) => l.startsWith('id: '))
        ?.slice(4);
      return { id, event, data: JSON.parse(data) as unknown };
    });
}

/** One event's block (the text between blank lines): its name (`message` when none) and its data lines joined. */
export function sseBlock(block: string): { event: string; data: string } {
  const lines = block.split('\n');
  const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
  const data = lines
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6))
    .join('\n');
  return { event, data };
}

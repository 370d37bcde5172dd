/**
 * @module Turning a verified inbound body into the agent's input text: strict JSON parsing, and
 * the webhook's Liquid template rendered in a sandbox (no file system, no includes, strict
 * filters and variables, bounded template size, render count, allocations, time and output).
 * Any failure is 400 `payload_invalid`; the detail is kept for the audit log only.
 */
import { Context, Liquid, type FS, type Template } from 'liquidjs';
import { ServiceError } from '../../errors.ts';
import { messageOf } from '../../caught.ts';

/** The longest template a webhook may configure, in characters. */
const MAX_TEMPLATE_LENGTH = 20_000;
/** The longest agent input a template may produce: the spec's message content limit. */
export const MAX_AGENT_INPUT_CHARS = 500_000;

/** Why a payload was refused (audit only; the client sees `payload_invalid` and a generic message). */
type PayloadFailureReason = 'invalid_utf8' | 'invalid_json' | 'template_error' | 'output_too_long' | 'output_empty';

/** The 400 of an inbound body that is not JSON or that the template cannot render. */
export class PayloadInvalidError extends ServiceError<'payload_invalid'> {
  constructor(
    readonly reason: PayloadFailureReason,
    readonly detail?: string,
  ) {
    super(
      'payload_invalid',
      400,
      reason === 'invalid_utf8' || reason === 'invalid_json'
        ? 'The body is not valid JSON.'
        : "The payload could not be turned into the agent's input by the webhook's template.",
      {},
    );
  }
}

/** The sandbox's budgets; the defaults suit payloads up to the 1 MB body cap. */
interface TemplateLimits {
  /** Longest output in characters; {@link MAX_AGENT_INPUT_CHARS}. */
  maxOutputChars: number;
  /** Most node renders (tags, outputs, text, every loop iteration's) in one render: a deterministic complexity cap. */
  maxRenders: number;
  /** Liquid's allocation budget (ranges, string concatenation, joins). */
  maxAllocations: number;
  /** Wall-clock budget of one render in milliseconds (a backstop behind the two caps above). */
  maxRenderMs: number;
}

const DEFAULT_TEMPLATE_LIMITS: Readonly<TemplateLimits> = {
  maxOutputChars: MAX_AGENT_INPUT_CHARS,
  maxRenders: 20_000,
  maxAllocations: 20_000_000,
  maxRenderMs: 2_000,
};

/**
 * Parse the raw body as strict UTF-8 JSON. Throws {@link PayloadInvalidError} on bad UTF-8
 * (never silently replaced) or bad JSON.
 */
export function parseInboundPayload(rawBody: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(rawBody);
  } catch {
    throw new PayloadInvalidError('invalid_utf8');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new PayloadInvalidError('invalid_json');
  }
}

/** Renders a webhook's template (or the default) over a parsed payload into the agent input. */
export type InboundTemplateRenderer = (template: string | null | undefined, payload: unknown) => Promise<string>;

/**
 * Build the renderer once per app. The template sees the payload's top-level fields as variables
 * (`{{ contact.name }}`) and the whole payload as `payload` (which wins over a top-level field of
 * that name). Variables are strict: a template naming a field the payload lacks does not render
 * (so `payload_invalid` tells the sender the body does not fit); guard optional fields with
 * `{% if field %}` or `| default:`. Unknown filters are refused. `include`, `render` and `layout`
 * are disabled and the engine has no file system. With no template configured, the agent input
 * is the payload as compact JSON.
 */
export function createTemplateRenderer(limits: Partial<TemplateLimits> = {}): InboundTemplateRenderer {
  const budget: TemplateLimits = { ...DEFAULT_TEMPLATE_LIMITS, ...limits };
  const engine = createSandboxedEngine();
  const parsed = new Map<string, Template[]>();

  return async function renderInboundTemplate(template, payload) {
    const output =
      template === null || template === undefined || template === ''
        ? JSON.stringify(payload)
        : await renderWithLimits(engine, parsedTemplate(engine, parsed, template), payload, budget);
    if (output.trim() === '') throw new PayloadInvalidError('output_empty');
    if (output.length > budget.maxOutputChars) throw new PayloadInvalidError('output_too_long');
    return output;
  };
}

/**
 * Whether a template can be configured: undefined when it parses in the sandbox, else a message
 * for the admin route's `invalid_body` answer.
 */
export function checkTemplate(template: string): string | undefined {
  if (template.length > MAX_TEMPLATE_LENGTH) return `The template is longer than ${MAX_TEMPLATE_LENGTH} characters`;
  try {
    createSandboxedEngine().parse(template);
    return undefined;
  } catch (error) {
    return `The template does not parse: ${messageOf(error)}`;
  }
}

async function renderWithLimits(engine: Liquid, template: Template[], payload: unknown, budget: TemplateLimits): Promise<string> {
  const scope: Record<string, unknown> = isPlainObject(payload) ? { ...payload, payload } : { payload };
  // Liquid checks its render limiter before every node it renders (loop bodies included); ours
  // counts those checks as well as watching the clock, which gives a deterministic complexity cap.
  const context = new Context(
    scope,
    engine.options,
    { memoryLimit: budget.maxAllocations },
    {
      renderLimit: new RenderBudget(budget.maxRenders, budget.maxRenderMs) as unknown as LiquidLimiter,
    },
  );
  try {
    const output: unknown = await engine.render(template, context);
    return String(output);
  } catch (error) {
    throw new PayloadInvalidError('template_error', messageOf(error));
  }
}

type LiquidLimiter = NonNullable<NonNullable<ConstructorParameters<typeof Context>[3]>['renderLimit']>;

/** The render limiter handed to Liquid: at most `maxRenders` node renders and `maxMs` of time. */
class RenderBudget {
  private renders = 0;
  private readonly deadline: number;

  constructor(
    private readonly maxRenders: number,
    maxMs: number,
  ) {
    this.deadline = performance.now() + maxMs;
  }

  check(): void {
    this.renders += 1;
    if (this.renders > this.maxRenders) throw new Error('template render count limit exceeded');
    if (performance.now() > this.deadline) throw new Error('template render time limit exceeded');
  }

  use(): void {}
}

// Parsed templates are kept per template text; a webhook's template rarely changes, and the map
// is emptied when it grows so a stream of edited templates cannot make it grow without bound.
function parsedTemplate(engine: Liquid, cache: Map<string, Template[]>, template: string): Template[] {
  const hit = cache.get(template);
  if (hit) return hit;
  if (template.length > MAX_TEMPLATE_LENGTH) throw new PayloadInvalidError('template_error', 'template too long');
  let tpl: Template[];
  try {
    tpl = engine.parse(template);
  } catch (error) {
    throw new PayloadInvalidError('template_error', messageOf(error));
  }
  if (cache.size >= 256) cache.clear();
  cache.set(template, tpl);
  return tpl;
}

function createSandboxedEngine(): Liquid {
  const engine = new Liquid({
    fs: NO_FILE_SYSTEM,
    templates: {},
    relativeReference: false,
    dynamicPartials: false,
    strictFilters: true,
    strictVariables: true,
    lenientIf: true,
    ownPropertyOnly: true,
    parseLimit: MAX_TEMPLATE_LENGTH,
    timezoneOffset: 0,
    locale: 'en-US',
  });
  // Partials would read templates from somewhere; a webhook template is one self-contained text.
  for (const tag of ['include', 'render', 'layout']) {
    engine.registerTag(tag, {
      parse() {
        throw new Error(`the ${tag} tag is not available in webhook templates`);
      },
      render() {
        return undefined;
      },
    });
  }
  return engine;
}

function refuseFileAccess(): never {
  throw new Error('webhook templates have no file system');
}

const NO_FILE_SYSTEM: FS = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async () => refuseFileAccess(),
  readFileSync: () => refuseFileAccess(),
  resolve: (_dir, file) => file,
  contains: async () => false,
  containsSync: () => false,
  sep: '/',
  dirname: () => '/',
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

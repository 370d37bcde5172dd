/**
 * @module The one structured logger (pino): one JSON line per event on stdout, written asynchronously
 * (pino's SonicBoom destination with `sync: false`: a line is queued and written by the thread pool, so
 * a request never waits for a pipe or a terminal; lines queued meanwhile go out in one write). What is
 * queued is written before the process ends: `flushLog` at the graceful stop (SIGTERM, SIGINT), pino's
 * own exit hook (`process.exit`), and `flushLogOnCrash` for an uncaught exception in the server process (it also
 * waits for the write in flight). `LOG_LEVEL` sets the
 * level (default `info`), `LOG_FORMAT=pretty` one readable line per event for development (a small
 * built-in formatter: no extra dependency).
 *
 * What is logged is chosen field by field (ids, status, durations): never a header, a cookie, a body or
 * a secret. As a second line of defence, fields whose names hold credentials are censored (`censorSecrets`), and
 * error messages pass through the response redactor (secrets, internal hosts); an error's stack frames
 * (function, file:line) are kept for the operator.
 */
import { Writable } from 'node:stream';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { redactText } from '../redact/index.ts';
import { isOneOf } from '../one-of.ts';

export type { Logger } from 'pino';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = 'json' | 'pretty';

/** Field names never written: the line's own fields and those one or two levels down (objects and arrays). */
const SECRET_FIELDS = new Set([
  'authorization',
  'cookie',
  'set-cookie',
  'password',
  'secret',
  'token',
  'csrfToken',
  'totpSecret',
  'totpCode',
  'apiKey',
  'signature',
  'secretKey',
]);
const CENSORED = '[redacted]';
/** How many levels below the line's own fields are searched (`headers.authorization`, `a.b.token`). */
const CENSOR_DEPTH = 2;

/**
 * The line's fields with every credential field's value replaced by `[redacted]`. Copies only the objects on the
 * way to a censored field, so the caller's object is never changed and a line without one costs a walk over its
 * keys. (pino's own `redact` with wildcard paths did the same at about 55 µs a line; this is a few.) Only plain
 * objects and arrays are searched: an error goes through its serializer, a date or a buffer is written as pino
 * writes it.
 */
export function censorSecrets(fields: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const [key, field] of Object.entries(fields)) {
    const next = censorField(key, field, CENSOR_DEPTH);
    if (next !== field) (copy ??= { ...fields })[key] = next;
  }
  return copy ?? fields;
}

/** A field's value as the line shows it: censored, searched (a copy where something inside was), or as it is. */
function censorField(key: string, field: unknown, depth: number): unknown {
  if (SECRET_FIELDS.has(key)) return CENSORED;
  return depth > 0 && isSearched(field) ? censor(field, depth - 1) : field;
}

function censor(value: object, depth: number): object {
  let copy: object | undefined;
  for (const [key, field] of Object.entries(value)) {
    const next = censorField(key, field, depth);
    if (next === field) continue;
    copy ??= Array.isArray(value) ? [...value] : { ...value };
    Reflect.set(copy, key, next);
  }
  return copy ?? value;
}

function isSearched(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null || Array.isArray(value);
}

interface LoggerSettings {
  level?: LogLevel;
  format?: LogFormat;
  /** Where lines go; stdout by default (tests capture them). */
  destination?: DestinationStream;
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }), log: censorSecrets },
    serializers: { err: serializeError, error: serializeError },
  };
  const destination = settings.destination ?? (settings.format === 'pretty' ? prettyStream() : pino.destination({ fd: 1, sync: false }));
  return pino(options, destination);
}

/** Writes the lines still queued at once (synchronously), where the destination queues any. */
export function flushLog(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, { flushSync?: () => void } | undefined>)[pino.symbols.streamSym];
  try {
    stream?.flushSync?.();
  } catch {
    // Not open yet (nothing was written) or already closed: nothing is queued.
  }
}

/** The SonicBoom destination's state this module reads: an asynchronous write in flight. */
type QueuedStream = { flushSync?: () => void; _writing?: boolean };

/** How long a crash waits for the write in flight before it ends the process anyway. */
const CRASH_FLUSH_WAIT_MS = 2_000;

/**
 * For the server process (`serve`): an uncaught exception ends the process, as it would have, but only once the
 * log's write in flight (if any) has completed and what is queued behind it is written. Node's own exit (and pino's
 * exit hook) writes what is queued but cannot wait for the chunk the thread pool is writing, so a crash while
 * stdout's pipe is full could lose those lines. The error is printed on stderr as Node prints it; exit code 1.
 */
export function flushLogOnCrash(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, QueuedStream | undefined>)[pino.symbols.streamSym];
  process.once('uncaughtException', (error) => {
    process.stderr.write(`${error instanceof Error && error.stack ? error.stack : String(error)}\n`);
    const deadline = Date.now() + CRASH_FLUSH_WAIT_MS;
    const end = () => {
      if (stream?._writing && Date.now() < deadline) {
        setTimeout(end, 5);
        return;
      }
      flushLog(logger);
      process.exit(1);
    };
    end();
  });
}

/** A logger that writes nothing (tests, in-process apps that pass none). */
export const silentLogger: Logger = pino({ level: 'silent' });

/** Reads LOG_LEVEL and LOG_FORMAT; a wrong value is refused with a readable message. */
export function readLogSettings(env: NodeJS.ProcessEnv): { level: LogLevel; format: LogFormat } {
  const level = (env.LOG_LEVEL || 'info').toLowerCase();
  if (!isOneOf(LOG_LEVELS, level)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}: ${env.LOG_LEVEL}`);
  const format = (env.LOG_FORMAT || 'json').toLowerCase();
  if (format !== 'json' && format !== 'pretty') throw new Error(`LOG_FORMAT must be json or pretty: ${env.LOG_FORMAT}`);
  return { level, format };
}

/**
 * An error as a log field: its name, its message with the values redacted, and its stack with the
 * frames (`at fn (file:line:col)`) kept, so an operator can find where a 500 came from. The stack's
 * first line is rebuilt from the redacted message; a frame that does not have the shape of a frame
 * (nothing but a function name and a code location) is redacted whole.
 */
export function serializeError(error: unknown): { type: string; message: string; stack?: string } {
  if (error instanceof Error) {
    const message = redactText(error.message);
    return { type: error.name, message, ...(error.stack ? { stack: redactStack(error.name, message, error.stack) } : {}) };
  }
  return { type: typeof error, message: redactText(String(error)) };
}

/** `at [async|new] name [as alias] (location)`, or a bare location; the location a path, URL or V8's own words. */
const FRAME = /^ {4}at (?:(?:async |new )?[\w$.<>[\]]+(?: \[as [\w$]+\])? \()?(?:(?:file:\/\/|node:)?[\w@%./+~-]+:\d+:\d+|<anonymous>|native|index \d+)\)?$/;

function redactStack(name: string, message: string, stack: string): string {
  // The message may span lines; the frames are the lines from the first "    at " on.
  const lines = stack.split('\n');
  const first = lines.findIndex((line) => line.startsWith('    at '));
  const frames = first === -1 ? [] : lines.slice(first).map((line) => (FRAME.test(line) ? line : '    at [redacted]'));
  return [`${name}: ${message}`, ...frames].join('\n');
}

/** `12:01:02.345 INFO  request getRun 200 12ms {…}`: one readable line per JSON line. */
function prettyStream(): DestinationStream {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        process.stdout.write(`${prettyLine(line)}\n`);
      }
      done();
    },
  });
}

export function prettyLine(line: string): string {
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null) return line;
    const { time, level, msg, ...rest }: { time?: unknown; level?: unknown; msg?: unknown } = parsed;
    const clock = typeof time === 'string' ? time.slice(11, 23) : '';
    const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
    return `${clock} ${String(level).toUpperCase().padEnd(5)} ${String(msg ?? '')}${extra}`;
  } catch {
    return line;
  }
}

let fallback: Logger | undefined;
/** Errors of components that were given no logger: JSON lines on stderr, level error. */
export function fallbackLogger(): Logger {
  fallback ??= createLogger({ level: 'error', destination: pino.destination({ fd: 2, sync: true }) });
  return fallback;
}

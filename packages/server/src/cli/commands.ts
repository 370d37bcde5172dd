/**
 * @module The command line's one command table and its dispatcher. Every command (`init`,
 * `keys create`, `webhooks inbound create`, `kill-switch status`, …) is an entry: its flags (as
 * `node:util` parseArgs options), its help, and what it runs. Groups (`keys`, `webhooks`,
 * `webhooks inbound`, …) have a help of their own. The dispatcher finds the longest command named
 * by the first words, parses the rest strictly, answers `--help`, and runs it; anything else is a
 * UsageError (exit 2) that says where the help is.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './usage.ts';
import { messageOf } from '../caught.ts';

export type Flags = Record<string, string | boolean | undefined>;
export type Print = (line: string) => void;

export interface CommandRun {
  command: string;
  values: Flags;
  positionals: string[];
  print: Print;
  /** The environment the command reads its settings from (DATA_DIR, DATABASE_URL, …). */
  env: NodeJS.ProcessEnv;
}

interface CommandSpec {
  /** The flags, `--help` included. */
  options: NonNullable<ParseArgsConfig['options']>;
  help: string;
  run(args: CommandRun): Promise<number>;
}

export interface CommandTable {
  /** Help of a group of commands, by its words (`keys`, `webhooks inbound`). */
  groups: Record<string, string>;
  commands: Record<string, CommandSpec>;
}

/** One table from the parts each area of the command line declares. */
export function commandTable(...parts: CommandTable[]): CommandTable {
  const table: CommandTable = { groups: {}, commands: {} };
  for (const part of parts) {
    for (const name of Object.keys(part.commands)) if (name in table.commands) throw new Error(`command "${name}" is declared twice`);
    Object.assign(table.groups, part.groups);
    Object.assign(table.commands, part.commands);
  }
  return table;
}

/**
 * The entries of every command of an options table (keyed by command), each made by `spec` from its
 * name, typed as that table's key (`for…in` over a generic object gives its keys as such).
 */
export function commandsOf<T extends object>(options: T, spec: (command: Extract<keyof T, string>) => CommandSpec): Record<string, CommandSpec> {
  const commands: Record<string, CommandSpec> = {};
  for (const command in options) commands[command] = spec(command);
  return commands;
}

const MAX_WORDS = 3;

export async function dispatch(argv: string[], table: CommandTable, mainHelp: string, print: Print, env: NodeJS.ProcessEnv): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    print(mainHelp);
    return first === undefined ? 2 : 0;
  }
  for (let words = Math.min(MAX_WORDS, argv.length); words >= 1; words -= 1) {
    const name = argv.slice(0, words).join(' ');
    const spec = table.commands[name];
    if (spec) return runCommand(name, spec, argv.slice(words), print, env);
  }
  for (let words = Math.min(MAX_WORDS - 1, argv.length); words >= 1; words -= 1) {
    const group = argv.slice(0, words).join(' ');
    const help = table.groups[group];
    if (help === undefined) continue;
    const next = argv[words];
    if (next === undefined || next === '--help' || next === '-h') {
      print(help);
      return next === undefined ? 2 : 0;
    }
    throw new UsageError(`Unknown command: ${argv.slice(0, words + 1).join(' ')}. Run \`service ${group} --help\`.`);
  }
  throw new UsageError(`Unknown command: ${first}. Run \`service --help\`.`);
}

/**
 * The flags and positionals of one command's arguments. A lone `--` is dropped: `pnpm start -- --port N`
 * hands it on (npm strips it, pnpm does not), and no command takes a positional that starts with `-`.
 */
export function parseCommandArgs(spec: CommandSpec, args: string[]): { values: Flags; positionals: string[] } {
  try {
    return parseArgs({ args: args.filter((arg) => arg !== '--'), options: spec.options, allowPositionals: true, strict: true }) as {
      values: Flags;
      positionals: string[];
    };
  } catch (err) {
    throw new UsageError(`${messageOf(err)}\n\n${spec.help}`);
  }
}

async function runCommand(command: string, spec: CommandSpec, args: string[], print: Print, env: NodeJS.ProcessEnv): Promise<number> {
  const parsed = parseCommandArgs(spec, args);
  if (parsed.values.help) {
    print(spec.help);
    return 0;
  }
  return spec.run({ command, values: parsed.values, positionals: parsed.positionals, print, env });
}

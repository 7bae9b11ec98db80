/** Command-line words of the admin CLI: positional arguments, `--name value` options and switches. */

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface ParsedArgs {
  positional: string[];
  /** `--name value` and `--name=value`. */
  options: Map<string, string>;
  /** Switches without a value: `--help` (also `-h`), `--yes`, `--create`. */
  switches: Set<string>;
}

const switchNames: readonly string[] = ['help', 'yes', 'create'];

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const parsed: ParsedArgs = { positional: [], options: new Map(), switches: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '-h') {
      parsed.switches.add('help');
      continue;
    }
    if (!arg.startsWith('-') || arg === '-') {
      parsed.positional.push(arg);
      continue;
    }
    if (!arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq > 0 ? eq : undefined);
    if (switchNames.includes(name)) {
      if (eq > 0) throw new UsageError(`--${name} takes no value`);
      parsed.switches.add(name);
      continue;
    }
    if (eq > 0) {
      parsed.options.set(name, arg.slice(eq + 1));
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined) throw new UsageError(`option ${arg} needs a value`);
    parsed.options.set(name, value);
    i++;
  }
  return parsed;
}

/** Refuses options and switches the command does not take. */
export function allowOnly(parsed: ParsedArgs, options: readonly string[], switches: readonly string[] = []): void {
  for (const name of parsed.options.keys()) {
    if (!options.includes(name)) throw new UsageError(`unknown option --${name}`);
  }
  for (const name of parsed.switches) {
    if (!switches.includes(name)) throw new UsageError(`--${name} does not apply here`);
  }
}

export function intOption(options: ReadonlyMap<string, string>, name: string): number | undefined {
  const raw = options.get(name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a non-negative integer`);
  return Number(raw);
}

/** The one positional argument at `index`, which must be the last. */
export function arg(positional: readonly string[], index: number, name: string): string {
  const value = positional[index];
  if (value === undefined) throw new UsageError(`missing <${name}>`);
  if (positional.length > index + 1) throw new UsageError(`unexpected argument "${positional[index + 1]}"`);
  return value;
}

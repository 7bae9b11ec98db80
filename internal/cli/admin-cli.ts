/**
 * The admin CLI: `locus realm ...`, `locus token ...`, `locus serve`. It opens the
 * store named by LOCUS_STORE (or --store) and calls the same RealmService as the
 * admin API; answers are printed as the admin API's JSON bodies.
 */
import { ConfigError, loadConfig } from '../config/config.js';
import { LocusError } from '../errors.js';
import { noChangeListener } from '../service/changes.js';
import { systemClock } from '../service/clock.js';
import { RealmService } from '../service/realms.js';
import { openStore } from '../store/open-store.js';
import { keyedById } from '../service/views.js';

export const usage = `usage:
  locus serve [--http-port N] [--tcp-port N] [--store sqlite:PATH] [...]   run the server
  locus realm create <realm> [--connection-timeout S] [--history-retention-days D] [--rate-limit R]
  locus realm update <realm> [same options as create]
  locus realm list
  locus realm show <realm>
  locus realm delete <realm>
  locus token create <realm> --scope read|write|admin
  locus token list <realm>
  locus token revoke <realm> <tokenId>
options: --store sqlite:PATH (default: $LOCUS_STORE or sqlite:./data/locus.db)`;

export interface CliOutput {
  out: (line: string) => void;
  err: (line: string) => void;
}

class UsageError extends Error {}

interface Parsed {
  positional: string[];
  options: Map<string, string>;
}

function parseArgs(argv: readonly string[]): Parsed {
  const positional: string[] = [];
  const options = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    if (eq > 0) {
      options.set(arg.slice(2, eq), arg.slice(eq + 1));
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined) throw new UsageError(`option ${arg} needs a value`);
    options.set(arg.slice(2), value);
    i++;
  }
  return { positional, options };
}

function takeOptions(options: Map<string, string>, allowed: readonly string[]): void {
  for (const name of options.keys()) {
    if (!allowed.includes(name)) throw new UsageError(`unknown option --${name}`);
  }
}

function intOption(options: Map<string, string>, name: string): number | undefined {
  const raw = options.get(name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a non-negative integer`);
  return Number(raw);
}

function settingsFrom(options: Map<string, string>): Record<string, number> {
  const settings: Record<string, number> = {};
  const timeout = intOption(options, 'connection-timeout');
  const retention = intOption(options, 'history-retention-days');
  const rate = intOption(options, 'rate-limit');
  if (timeout !== undefined) settings.connectionTimeout = timeout;
  if (retention !== undefined) settings.historyRetentionDays = retention;
  if (rate !== undefined) settings.rateLimit = rate;
  return settings;
}

function arg(positional: readonly string[], index: number, name: string): string {
  const value = positional[index];
  if (value === undefined) throw new UsageError(`missing <${name}>`);
  if (positional.length > index + 1) throw new UsageError(`unexpected argument "${positional[index + 1]}"`);
  return value;
}

async function runAdmin(parsed: Parsed, env: NodeJS.ProcessEnv, io: CliOutput): Promise<void> {
  const { positional, options } = parsed;
  const storeUrl = options.get('store');
  options.delete('store');
  const config = loadConfig(storeUrl === undefined ? env : { ...env, LOCUS_STORE: storeUrl });
  const store = openStore(config.store);
  const realms = new RealmService(store, systemClock, noChangeListener);
  const print = (value: unknown): void => io.out(JSON.stringify(value, null, 2));
  try {
    const [group, command] = positional;
    const key = `${group ?? ''} ${command ?? ''}`;
    const rest = positional.slice(2);
    const settingOptions = ['connection-timeout', 'history-retention-days', 'rate-limit'];
    switch (key) {
      case 'realm create':
      case 'realm update': {
        takeOptions(options, settingOptions);
        const { realm } = await realms.put(arg(rest, 0, 'realm'), { settings: settingsFrom(options) });
        print({ id: realm.id, result: 'success', settings: realm.settings });
        break;
      }
      case 'realm list':
        takeOptions(options, []);
        if (rest.length > 0) throw new UsageError('realm list takes no argument');
        print(keyedById(await realms.list()));
        break;
      case 'realm show':
        takeOptions(options, []);
        print(await realms.get(arg(rest, 0, 'realm')));
        break;
      case 'realm delete': {
        takeOptions(options, []);
        const id = arg(rest, 0, 'realm');
        await realms.delete(id);
        print({ id, result: 'success' });
        break;
      }
      case 'token create': {
        takeOptions(options, ['scope']);
        const scope = options.get('scope');
        if (scope === undefined) throw new UsageError('token create needs --scope read|write|admin');
        print(await realms.createToken(arg(rest, 0, 'realm'), { scope }));
        break;
      }
      case 'token list':
        takeOptions(options, []);
        print((await realms.get(arg(rest, 0, 'realm'))).tokens);
        break;
      case 'token revoke': {
        takeOptions(options, []);
        if (rest.length !== 2) throw new UsageError('token revoke needs <realm> <tokenId>');
        const [realm = '', tokenId = ''] = rest;
        await realms.revokeToken(realm, tokenId);
        print({ id: tokenId, result: 'success' });
        break;
      }
      default:
        throw new UsageError(`unknown command "${positional.join(' ')}"`);
    }
  } finally {
    await store.close();
  }
}

/** Runs one CLI command; resolves to the process exit code. */
export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv, io: CliOutput): Promise<number> {
  try {
    const parsed = parseArgs(argv);
    if (parsed.positional.length === 0 || parsed.options.has('help') || parsed.positional[0] === 'help') {
      io.out(usage);
      return parsed.positional.length === 0 && !parsed.options.has('help') ? 2 : 0;
    }
    await runAdmin(parsed, env, io);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`locus: ${err.message}\n${usage}`);
      return 2;
    }
    if (err instanceof ConfigError || err instanceof LocusError) {
      io.err(`locus: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

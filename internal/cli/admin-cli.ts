/**
 * The admin CLI: `locus realm ...`, `locus token ...`, `locus tenant ...`, `locus key ...`,
 * `locus help`. It resolves the
 * store as the server does (LOCUS_STORE, or --store), names it on stderr, and calls the
 * same RealmService as the admin API; answers are the admin API's JSON bodies on stdout.
 * It does not claim the store (store-owner.ts): it is short-lived, so it manages realms
 * beside a running server. With a shared bus (LOCUS_BUS `nats://…`, cluster mode) it also
 * announces what it changed there, as the admin API does: the servers drop a revoked token
 * or a deleted realm from their caches at once, and a deleted realm's subscribers hear of it.
 * Without one (`local`), or when the bus cannot be reached (said on stderr), the servers see
 * the change when their cached entries expire (at most 1 s, auth/held-lookups.ts).
 */
import { existsSync } from 'node:fs';
import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { openBus } from '../events/open-bus.js';
import type { EventBus } from '../events/port.js';
import { ControlChannel } from '../service/control.js';
import { LocusError } from '../errors.js';
import { noChangeListener } from '../service/changes.js';
import { systemClock } from '../service/clock.js';
import { RealmService } from '../service/realms.js';
import { TenantService } from '../service/tenants.js';
import { defaultTenant } from '../auth/principal.js';
import { keyedById } from '../service/views.js';
import { openStore, storeFile } from '../store/open-store.js';
import { redactStoreUrl } from '../store/store-url.js';
import type { Store } from '../store/port.js';
import { allowOnly, arg, intOption, parseArgs, UsageError, type ParsedArgs } from './cli-args.js';
import { helpFor, usage } from './cli-help.js';

export { usage } from './cli-help.js';

export interface CliOutput {
  out: (line: string) => void;
  err: (line: string) => void;
  /** A person at a terminal can answer `prompt`; otherwise a destructive command needs --yes. */
  isTTY?: boolean;
  /** Asks on the terminal and resolves to the line typed. */
  prompt?: (question: string) => Promise<string>;
}

/** A command that was refused or not confirmed; nothing was changed (exit code 1). */
class RefusedError extends Error {
  override readonly name = 'RefusedError';
}

const settingOptions = ['connection-timeout', 'history-retention-days', 'rate-limit'];

function settingsFrom(options: ReadonlyMap<string, string>): Record<string, number> {
  const settings: Record<string, number> = {};
  const timeout = intOption(options, 'connection-timeout');
  const retention = intOption(options, 'history-retention-days');
  const rate = intOption(options, 'rate-limit');
  if (timeout !== undefined) settings.connectionTimeout = timeout;
  if (retention !== undefined) settings.historyRetentionDays = retention;
  if (rate !== undefined) settings.rateLimit = rate;
  return settings;
}

/** Opens the configured store, which must exist unless --create is given; with the configuration it was found by. */
async function openConfiguredStore(parsed: ParsedArgs, env: NodeJS.ProcessEnv, io: CliOutput): Promise<{ store: Store; config: Config }> {
  const flag = parsed.options.get('store');
  parsed.options.delete('store');
  const create = parsed.switches.delete('create');
  const config = loadConfig(env, flag === undefined ? [] : ['--store', flag]);
  const file = storeFile(config.store);
  io.err(`locus: store ${file === null ? redactStoreUrl(config.store) : `sqlite:${file}`}`);
  // A CLI run in the wrong directory must not quietly make a new, empty store there.
  if (file !== null && !create && !existsSync(file)) {
    throw new ConfigError(`no store at ${file}: start the server once to create it, or pass --create`);
  }
  return { store: await openStore(config.store), config };
}

/** The servers' shared bus (see the module comment); null for `local`, or when it cannot be reached. */
async function openSharedBus(config: Config, io: CliOutput): Promise<EventBus | null> {
  if (config.bus === 'local') return null;
  try {
    return await openBus(config.bus, { name: 'locus-cli' });
  } catch (err) {
    // The URL may hold a password: not repeated here.
    io.err(`locus: the event bus (LOCUS_BUS) cannot be reached (${err instanceof Error ? err.message : String(err)}); servers see this change within 1 s`);
    return null;
  }
}

/** Deletion takes the realm's whole data: a person types the realm id, a script passes --yes. */
async function confirmDelete(id: string, parsed: ParsedArgs, io: CliOutput): Promise<void> {
  if (parsed.switches.has('yes')) return;
  if (io.isTTY !== true || io.prompt === undefined) {
    throw new RefusedError(`realm delete removes realm ${id} with all of its data: pass --yes to confirm when not on a terminal`);
  }
  const answer = await io.prompt(`Delete realm ${id} with all of its objects, areas, history and tokens? Type ${id} to confirm: `);
  if (answer.trim() !== id) throw new RefusedError(`not confirmed; realm ${id} was not deleted`);
}

/** `--tenant T` (default: the default tenant). */
function tenantOption(options: Map<string, string>): string {
  const tenant = options.get('tenant') ?? defaultTenant;
  options.delete('tenant');
  return tenant;
}

async function runCommand(parsed: ParsedArgs, realms: RealmService, tenants: TenantService, io: CliOutput): Promise<void> {
  const { positional, options } = parsed;
  const [group, command] = positional;
  const rest = positional.slice(2);
  const print = (value: unknown): void => io.out(JSON.stringify(value, null, 2));
  // Realm and token commands act in one tenant: --tenant, else the default tenant.
  const tenant = group === 'realm' || group === 'token' ? tenantOption(options) : defaultTenant;
  switch (`${group ?? ''} ${command ?? ''}`) {
    case 'realm create': {
      allowOnly(parsed, settingOptions);
      const realm = await realms.createWithSettings(tenant, arg(rest, 0, 'realm'), { settings: settingsFrom(options) });
      print({ id: realm.name, result: 'success', settings: realm.settings });
      break;
    }
    case 'realm update': {
      allowOnly(parsed, settingOptions);
      const realm = await realms.updateSettings(tenant, arg(rest, 0, 'realm'), { settings: settingsFrom(options) });
      print({ id: realm.name, result: 'success', settings: realm.settings });
      break;
    }
    case 'realm list':
      allowOnly(parsed, []);
      if (rest.length > 0) throw new UsageError('realm list takes no argument');
      print(Object.fromEntries((await realms.list(tenant)).map((realm) => [realm.name, { ...realm, id: realm.name }])));
      break;
    case 'realm show':
      allowOnly(parsed, []);
      print(await realms.get(tenant, arg(rest, 0, 'realm')));
      break;
    case 'realm delete': {
      allowOnly(parsed, [], ['yes']);
      const { id } = await realms.get(tenant, arg(rest, 0, 'realm'));
      await confirmDelete(id, parsed, io);
      await realms.delete(tenant, id);
      print({ id, result: 'success' });
      break;
    }
    case 'token create': {
      allowOnly(parsed, ['scope']);
      const scope = options.get('scope');
      if (scope === undefined) throw new UsageError('token create needs --scope read|write|admin');
      print(await realms.createToken(tenant, arg(rest, 0, 'realm'), { scope }));
      break;
    }
    case 'token list':
      allowOnly(parsed, []);
      print((await realms.get(tenant, arg(rest, 0, 'realm'))).tokens);
      break;
    case 'token revoke': {
      allowOnly(parsed, []);
      if (rest.length !== 2) throw new UsageError('token revoke needs <realm> <tokenId>');
      const [realm = '', tokenId = ''] = rest;
      await realms.revokeToken(tenant, realm, tokenId);
      print({ id: tokenId, result: 'success' });
      break;
    }
    case 'tenant create': {
      allowOnly(parsed, ['label']);
      const label = options.get('label');
      const created = await tenants.create(arg(rest, 0, 'tenant'), label === undefined ? {} : { label });
      print({ id: created.id, result: 'success' });
      break;
    }
    case 'tenant list':
      allowOnly(parsed, []);
      if (rest.length > 0) throw new UsageError('tenant list takes no argument');
      print(keyedById(await tenants.list()));
      break;
    case 'tenant show':
      allowOnly(parsed, []);
      print(await tenants.get(arg(rest, 0, 'tenant')));
      break;
    case 'tenant delete': {
      allowOnly(parsed, []);
      const id = arg(rest, 0, 'tenant');
      await tenants.delete(id);
      print({ id, result: 'success' });
      break;
    }
    case 'key create': {
      allowOnly(parsed, ['realm']);
      const realm = options.get('realm');
      print(await tenants.createKey(arg(rest, 0, 'tenant'), realm === undefined ? {} : { realm }));
      break;
    }
    case 'key list':
      allowOnly(parsed, []);
      print(await tenants.listKeys(arg(rest, 0, 'tenant')));
      break;
    case 'key rotate':
    case 'key revoke': {
      allowOnly(parsed, []);
      if (rest.length !== 2) throw new UsageError(`key ${command ?? ''} needs <tenant> <keyId>`);
      const [owner = '', keyId = ''] = rest;
      if (command === 'rotate') print(await tenants.rotateKey(owner, keyId));
      else {
        await tenants.revokeKey(owner, keyId);
        print({ id: keyId, result: 'success' });
      }
      break;
    }
    default:
      throw new UsageError(`unknown command "${positional.join(' ')}"`);
  }
}

const commandGroups = ['realm', 'token', 'tenant', 'key'];

/** Runs one CLI command; resolves to the process exit code. */
export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv, io: CliOutput): Promise<number> {
  try {
    if (argv.length === 0) {
      io.err(usage);
      return 2;
    }
    const parsed = parseArgs(argv);
    const { positional } = parsed;
    if (positional[0] === 'help' || parsed.switches.has('help')) {
      const topic = positional[0] === 'help' ? positional[1] : positional[0];
      const page = helpFor(topic);
      if (page === null) throw new UsageError(`no help on "${topic ?? ''}"`);
      io.out(page);
      return 0;
    }
    // Checked before the store is opened: a mistyped command must not need (or create) one.
    if (!commandGroups.includes(positional[0] ?? '')) throw new UsageError(`unknown command "${positional.join(' ')}"`);
    const { store, config } = await openConfiguredStore(parsed, env, io);
    let bus: EventBus | null = null;
    let control: ControlChannel | null = null;
    try {
      bus = await openSharedBus(config, io);
      control = bus === null ? null : new ControlChannel(bus);
      await runCommand(
        parsed,
        new RealmService(store, systemClock, noChangeListener, bus ?? undefined, control ?? undefined),
        new TenantService(store, systemClock, control ?? undefined),
        io,
      );
    } finally {
      control?.close();
      // Closing the bus sends what was announced before it goes.
      await bus?.close();
      await store.close();
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`locus: ${err.message}\n${usage}`);
      return 2;
    }
    if (err instanceof ConfigError || err instanceof LocusError || err instanceof RefusedError) {
      io.err(`locus: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

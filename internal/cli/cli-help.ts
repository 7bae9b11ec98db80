/** The admin CLI's help: the usage summary and one page per command group. */
import { settingList } from '../config/config.js';

export const usage = `usage:
  locus serve [--http-port N] [--tcp-port N] [--store sqlite:PATH] [...]   run the server
  locus realm create <realm> [--connection-timeout S] [--history-retention-days D] [--rate-limit R]
  locus realm update <realm> [same options as create]
  locus realm list
  locus realm show <realm>
  locus realm delete <realm> [--yes]
  locus token create <realm> --scope read|write|admin
  locus token list <realm>
  locus token revoke <realm> <tokenId>
  locus tenant create <tenant> [--label L]
  locus tenant list | show <tenant> | delete <tenant>
  locus key create <tenant> [--realm R]
  locus key list <tenant>
  locus key rotate <tenant> <keyId>
  locus key revoke <tenant> <keyId>
  locus help [realm|token|tenant|key|serve]
realm and token commands take --tenant T (default: the default tenant, "default").
options of every admin command:
  --store sqlite:PATH   the store (default: $LOCUS_STORE, else sqlite:./data/locus.db)
  --create              create the store if it does not exist (otherwise a missing store is an error)
The store opened is named on stderr; answers are JSON on stdout.
With $LOCUS_BUS set to the servers' nats:// bus, changes are announced there too (servers act at once).`;

const realmHelp = `usage:
  locus realm create <realm> [settings]   create a realm; an existing one is an error (exit 1, unchanged)
  locus realm update <realm> [settings]   change settings of an existing realm; settings not given keep their value
  locus realm list                        all realms, keyed by id
  locus realm show <realm>                one realm, with its tokens (ids and scopes, never secrets)
  locus realm delete <realm> [--yes]      delete a realm with all of its objects, areas, history and tokens;
                                          on a terminal asks you to type the realm id, elsewhere needs --yes
settings:
  --connection-timeout S          seconds (no longer used: connectionStatus comes from presence; accepted for old scripts)
  --history-retention-days D      days of history kept
  --rate-limit R                  requests per second per token
The admin CLI does not claim the store, so it works beside a running server on the same file.`;

const tokenHelp = `usage:
  locus token create <realm> --scope read|write|admin   issue a token; its secret is printed once
  locus token list <realm>                              the realm's tokens (ids and scopes)
  locus token revoke <realm> <tokenId>                  revoke a token; open connections using it are closed`;

const tenantHelp = `usage:
  locus tenant create <tenant> [--label L]   create a tenant (id: 1-64 of a-z, 0-9, -)
  locus tenant list                          all tenants, keyed by id
  locus tenant show <tenant>                 one tenant, its realms and its signing keys (never secrets)
  locus tenant delete <tenant>               delete a tenant and its keys; refused while it has realms
                                             (delete them first: locus realm delete <r> --tenant <tenant>)
The default tenant ("default") always exists; LOCUS_JWT_SECRET is its key for JWTs without kid.`;

const keyHelp = `usage:
  locus key create <tenant> [--realm R]   a JWT signing key (HS256); its secret is printed once.
                                          With --realm, tokens it signs reach realm R only.
  locus key list <tenant>                 the tenant's keys (ids, realm bindings; never secrets)
  locus key rotate <tenant> <keyId>       a new key with the same binding (secret printed once), then the old one revoked
  locus key revoke <tenant> <keyId>       revoke a key: tokens it signed fail with "signing key not found"
Sign tokens with header kid = the key id and the secret string as the HMAC key.`;

/** The server's settings; `command` is how it was started (`locus serve`, or its script). */
export function serveHelp(command = 'locus serve'): string {
  const rows = settingList().map((s) => `  --${s.flag.padEnd(24)} ${s.env.padEnd(28)} default ${s.def}`);
  return [
    `usage: ${command} [--FLAG VALUE ...]`,
    'Runs the server. Every setting is an environment variable and a flag; a flag wins over its variable.',
    'A server owns its store: a second server on the same LOCUS_STORE refuses to start.',
    ...rows,
  ].join('\n');
}

const topics: Readonly<Record<string, () => string>> = {
  realm: () => realmHelp,
  token: () => tokenHelp,
  tenant: () => tenantHelp,
  key: () => keyHelp,
  serve: () => serveHelp(),
};

/** The help page of a command group, or null when there is none of that name. */
export function helpFor(topic: string | undefined): string | null {
  if (topic === undefined) return usage;
  const page = topics[topic];
  return page === undefined ? null : page();
}

/** `--help` or `-h` anywhere, or `help` first: an entry point prints its help and starts nothing. */
export function asksForHelp(argv: readonly string[]): boolean {
  return argv[0] === 'help' || argv.includes('--help') || argv.includes('-h');
}

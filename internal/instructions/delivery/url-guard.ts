/**
 * Decides whether a sendToUrl target may be reached, and where exactly: the URL's host name is
 * resolved once, every address it resolves to is checked (address-ranges.ts), and the request
 * then connects to the checked address itself (http-post.ts pins it), so a name that resolves
 * elsewhere between the check and the connection (DNS rebinding) cannot lead around the check.
 */
import { lookup } from 'node:dns/promises';
import { normalHost, parseAddress, refusalOf, type Address, type AllowList } from './address-ranges.js';

/** Resolves a host name to every address it has (node:dns lookup, so /etc/hosts counts). */
export type Resolver = (host: string) => Promise<readonly string[]>;

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** A target that may be reached: connect to `address` for `url`. */
export interface VettedTarget {
  url: URL;
  address: Address;
}

export type Vetting =
  | { kind: 'vetted'; target: VettedTarget }
  /** Never to be sent (scheme, refused address): retrying cannot help. */
  | { kind: 'refused'; reason: string }
  /** The name did not resolve now: may resolve later. */
  | { kind: 'unresolved'; reason: string };

/** The URL as log messages show it: no user name, password or query (they may hold secrets). */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return JSON.stringify(url.slice(0, 200));
  }
}

export class UrlGuard {
  constructor(
    private readonly allow: AllowList,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  async vet(urlText: string): Promise<Vetting> {
    let url: URL;
    try {
      url = new URL(urlText);
    } catch {
      return { kind: 'refused', reason: 'not a valid URL' };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return { kind: 'refused', reason: `only http and https URLs are sent to, not ${url.protocol.slice(0, -1)}` };
    }
    const literal = parseAddress(url.hostname);
    let addresses: Address[];
    if (literal !== null) {
      addresses = [literal];
    } else {
      let resolved: readonly string[];
      try {
        resolved = await this.resolve(url.hostname);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        return { kind: 'unresolved', reason: `${url.hostname} did not resolve (${typeof code === 'string' ? code : 'lookup failed'})` };
      }
      addresses = resolved.map(parseAddress).filter((a): a is Address => a !== null);
      if (addresses.length === 0) return { kind: 'unresolved', reason: `${url.hostname} has no address` };
    }
    const first = addresses[0] as Address;
    if (literal === null && this.allow.hosts.has(normalHost(url.hostname))) return { kind: 'vetted', target: { url, address: first } };
    for (const address of addresses) {
      const refusal = refusalOf(address, this.allow);
      if (refusal !== null) {
        const via = literal === null ? `${url.hostname} resolves to ${refusal}` : refusal;
        return { kind: 'refused', reason: `${via}; LOCUS_SEND_TO_URL_ALLOW may allow it` };
      }
    }
    return { kind: 'vetted', target: { url, address: first } };
  }
}

/**
 * Which network addresses sendToUrl may reach. A self-hosted server must not become a proxy into
 * its own network, so targets in special-purpose ranges (loopback, link-local, private, shared,
 * multicast, reserved) are refused unless the operator allows them (LOCUS_SEND_TO_URL_ALLOW:
 * addresses, CIDRs and host names, comma-separated).
 *
 * IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) are judged by the IPv4 address they lead to as well. Pure: no I/O.
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface Address {
  family: 4 | 6;
  /** The address as an unsigned integer of 32 (IPv4) or 128 (IPv6) bits. */
  value: bigint;
  /** As written, for messages. */
  text: string;
}

export interface Cidr {
  family: 4 | 6;
  base: bigint;
  bits: number;
}

/** The operator's exceptions: targets in these ranges, or with these host names, are allowed. */
export interface AllowList {
  ranges: readonly Cidr[];
  /** Lower case, without a trailing dot. */
  hosts: ReadonlySet<string>;
}

export const emptyAllowList: AllowList = { ranges: [], hosts: new Set() };

function parseIPv4(text: string): bigint | null {
  if (!isIPv4(text)) return null;
  return text.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function parseIPv6(text: string): bigint | null {
  const bare = text.split('%')[0] ?? '';
  if (!isIPv6(bare)) return null;
  let hex = bare;
  const lastColon = hex.lastIndexOf(':');
  if (hex.includes('.', lastColon)) {
    const v4 = parseIPv4(hex.slice(lastColon + 1));
    if (v4 === null) return null;
    hex = `${hex.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = hex.split('::');
  const head = halves[0] === '' || halves[0] === undefined ? [] : halves[0].split(':');
  const tail = halves.length < 2 || halves[1] === '' ? [] : (halves[1] ?? '').split(':');
  const groups = halves.length < 2 ? head : [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** An IP address (IPv6 with or without brackets and zone), or null when the text is none. */
export function parseAddress(text: string): Address | null {
  const unbracketed = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const v4 = parseIPv4(unbracketed);
  if (v4 !== null) return { family: 4, value: v4, text: unbracketed };
  const v6 = parseIPv6(unbracketed);
  return v6 === null ? null : { family: 6, value: v6, text: unbracketed };
}

function cidr(text: string): Cidr {
  const [address, bits] = text.split('/');
  const parsed = parseAddress(address ?? '');
  if (parsed === null) throw new Error(`bad built-in range ${text}`);
  return { family: parsed.family, base: parsed.value, bits: Number(bits) };
}

export function inRange(range: Cidr, address: Address): boolean {
  if (range.family !== address.family) return false;
  const shift = BigInt((range.family === 4 ? 32 : 128) - range.bits);
  return address.value >> shift === range.base >> shift;
}

interface NamedRange {
  range: Cidr;
  /** What the range is, as a refusal names it. */
  what: string;
}

const named = (text: string, what: string): NamedRange => ({ range: cidr(text), what });

/** IPv4 targets refused unless allowed (RFC 6890 special-purpose ranges that reach no public host). */
const refusedV4: readonly NamedRange[] = [
  named('0.0.0.0/8', 'an unspecified ("this network") address'),
  named('127.0.0.0/8', 'a loopback address'),
  named('10.0.0.0/8', 'a private address'),
  named('172.16.0.0/12', 'a private address'),
  named('192.168.0.0/16', 'a private address'),
  named('100.64.0.0/10', 'a shared (carrier-grade NAT) address'),
  named('169.254.0.0/16', 'a link-local address'),
  named('192.0.0.0/24', 'an IETF protocol address'),
  named('198.18.0.0/15', 'a benchmarking address'),
  named('224.0.0.0/4', 'a multicast address'),
  named('240.0.0.0/4', 'a reserved or broadcast address'),
];

const refusedV6: readonly NamedRange[] = [
  named('::/128', 'an unspecified address'),
  named('::1/128', 'a loopback address'),
  named('::/96', 'an IPv4-compatible address'),
  named('fe80::/10', 'a link-local address'),
  named('fec0::/10', 'a site-local address'),
  named('fc00::/7', 'a unique-local (private) address'),
  named('ff00::/8', 'a multicast address'),
  named('64:ff9b:1::/48', 'a local-use NAT64 address'),
];

/** IPv6 ranges whose addresses lead to an IPv4 address: where it sits in the 128 bits. */
const v4Carriers: readonly { range: Cidr; shift: bigint }[] = [
  { range: cidr('::ffff:0:0/96'), shift: 0n },
  { range: cidr('64:ff9b::/96'), shift: 0n },
  { range: cidr('2002::/16'), shift: 80n },
];

/** The IPv4 address an IPv6 address leads to (mapped, NAT64, 6to4), or null. */
export function embeddedIPv4(address: Address): Address | null {
  if (address.family !== 6) return null;
  for (const carrier of v4Carriers) {
    if (inRange(carrier.range, address)) {
      const value = (address.value >> carrier.shift) & 0xffffffffn;
      const text = [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
      return { family: 4, value, text };
    }
  }
  return null;
}

function allowedByRange(allow: AllowList, address: Address): boolean {
  return allow.ranges.some((range) => inRange(range, address));
}

/**
 * Why sendToUrl must not reach this address (`127.0.0.1 is a loopback address`), or null when it
 * may: a public address, or one the allow list covers (an IPv4 address allowed also allows its
 * IPv6 forms).
 */
export function refusalOf(address: Address, allow: AllowList): string | null {
  if (allowedByRange(allow, address)) return null;
  const v4 = embeddedIPv4(address);
  if (v4 !== null) {
    const inner = refusalOf(v4, allow);
    return inner === null ? null : `${address.text} leads to ${inner}`;
  }
  const ranges = address.family === 4 ? refusedV4 : refusedV6;
  const hit = ranges.find((r) => inRange(r.range, address));
  return hit === undefined ? null : `${address.text} is ${hit.what}`;
}

/** A host name as compared: lower case, without the trailing dot of a fully qualified name. */
export function normalHost(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

const notAllowable = (entry: string): string => `"${entry}" is not an address, a CIDR (10.0.0.0/8) or a host name`;

/**
 * LOCUS_SEND_TO_URL_ALLOW's entries: an address (`10.1.2.3`, `fd00::5`; that address alone), a
 * CIDR (`10.0.0.0/8`) or a host name (`hooks.internal`; that name whatever it resolves to).
 * Throws an Error naming the first entry that is none of them.
 */
export function parseAllowList(entries: readonly string[]): AllowList {
  const ranges: Cidr[] = [];
  const hosts = new Set<string>();
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    const slash = entry.indexOf('/');
    if (slash >= 0) {
      const address = parseAddress(entry.slice(0, slash));
      const bitsText = entry.slice(slash + 1);
      if (address === null) throw new Error(notAllowable(entry));
      const max = address.family === 4 ? 32 : 128;
      if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > max) {
        throw new Error(`"${entry}" is not a CIDR such as 10.0.0.0/8 or fd00::/8`);
      }
      ranges.push({ family: address.family, base: address.value, bits: Number(bitsText) });
      continue;
    }
    const address = parseAddress(entry);
    if (address !== null) {
      ranges.push({ family: address.family, base: address.value, bits: address.family === 4 ? 32 : 128 });
      continue;
    }
    const host = normalHost(entry);
    if (!HOST_NAME.test(host)) throw new Error(notAllowable(entry));
    hosts.add(host);
  }
  return { ranges, hosts };
}

/**
 * One POST of a sendToUrl delivery, to a vetted target (url-guard.ts): the connection goes to the
 * checked address whatever the name resolves to by then (a `lookup` that answers only it), the
 * TLS name and the Host header stay the URL's. Redirects are answers like any other: never
 * followed. The timeout covers the exchange from connecting to the answer's status line (and cuts
 * off a body that stalls after it).
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { VettedTarget } from './url-guard.js';

export type PostResult =
  | { kind: 'answered'; status: number; retryAfterMs: number | null; location: string | null }
  | { kind: 'unreachable'; reason: string };

/** The agents a delivery queue sends through (kept-alive connections, per target address). */
export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

export function newAgents(): Agents {
  return { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
}

/** A `lookup` that resolves every name to the one vetted address. */
function pinnedLookup(target: VettedTarget): LookupFunction {
  const { text, family } = target.address;
  return (_hostname, options, callback) => {
    if (options.all === true) (callback as (err: null, addresses: { address: string; family: number }[]) => void)(null, [{ address: text, family }]);
    else callback(null, text, family);
  };
}

/** Retry-After as seconds (RFC 9110 also allows a date; a date is ignored: backoff applies). */
function retryAfterMs(value: string | undefined): number | null {
  return value !== undefined && /^\d{1,6}$/.test(value.trim()) ? Number(value.trim()) * 1000 : null;
}

/** Header values are visible ASCII: anything else in an id travels percent-encoded. */
export function headerValue(text: string): string {
  return /^[\x21-\x7e]*$/.test(text) ? text : encodeURIComponent(text);
}

export function postJson(
  target: VettedTarget,
  body: string,
  headers: Readonly<Record<string, string>>,
  timeoutMs: number,
  agents: Agents,
  signal: AbortSignal,
): Promise<PostResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: PostResult): void => {
      if (!settled) {
        settled = true;
        resolve(result);
      }
    };
    const https_ = target.url.protocol === 'https:';
    const request = (https_ ? https : http).request(target.url, {
      method: 'POST',
      agent: https_ ? agents.https : agents.http,
      lookup: pinnedLookup(target),
      headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      signal,
    });
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    request.on('response', (response) => {
      // The status decides; the body is read to its end (so the connection can be reused) but
      // not kept, and a body that stalls is cut off by the same timer.
      finish({
        kind: 'answered',
        status: response.statusCode ?? 0,
        retryAfterMs: retryAfterMs(response.headers['retry-after']),
        location: response.headers.location ?? null,
      });
      response.resume();
      response.on('close', () => clearTimeout(timer));
      // A body cut off (timer, abort, the receiver hanging up) is no concern once the status is known.
      response.on('error', () => undefined);
    });
    request.on('error', (err) => {
      clearTimeout(timer);
      finish({ kind: 'unreachable', reason: err.message });
    });
    request.end(body);
  });
}

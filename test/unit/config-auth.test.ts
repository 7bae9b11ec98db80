import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearerSecret } from '../../internal/auth/authenticator.js';
import { RateLimiter } from '../../internal/auth/rate-limiter.js';
import { generateSecret, hashSecret } from '../../internal/auth/tokens.js';
import { ConfigError, loadConfig } from '../../internal/config/config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.httpPort, 8080);
    assert.equal(c.tcpPort, 7070);
    assert.equal(c.store, 'sqlite:./data/locus.db');
    assert.equal(c.bus, 'local');
    assert.equal(c.adminToken, null);
    assert.equal(c.maxBodyBytes, 5 * 1024 * 1024);
    assert.equal(c.maxBulk, 10_000);
    assert.equal(c.rateLimit, 1000);
  });
  it('reads variables, and flags win over variables', () => {
    const c = loadConfig({ LOCUS_HTTP_PORT: '9000', LOCUS_MAX_BULK: '5' }, ['--http-port', '9001', '--store=sqlite:/tmp/x.db']);
    assert.equal(c.httpPort, 9001);
    assert.equal(c.maxBulk, 5);
    assert.equal(c.store, 'sqlite:/tmp/x.db');
  });
  it('names the variable of an invalid value', () => {
    assert.throws(() => loadConfig({ LOCUS_HTTP_PORT: 'http' }), (e: unknown) => e instanceof ConfigError && /LOCUS_HTTP_PORT/.test(e.message));
    assert.throws(() => loadConfig({ LOCUS_TCP_PORT: '70000' }), /LOCUS_TCP_PORT/);
    assert.throws(() => loadConfig({ LOCUS_STORE: 'postgres://x' }), /LOCUS_STORE/);
    assert.throws(() => loadConfig({ LOCUS_BUS: 'kafka' }), /LOCUS_BUS/);
    assert.throws(() => loadConfig({ LOCUS_ADMIN_TOKEN: 'short' }), /LOCUS_ADMIN_TOKEN/);
    assert.throws(() => loadConfig({ LOCUS_MAX_BULK: '0' }), /LOCUS_MAX_BULK/);
    assert.throws(() => loadConfig({}, ['--nope', '1']), /--nope/);
  });
  it('has the v1 connection limits, validated', () => {
    const c = loadConfig({});
    assert.deepEqual(
      [c.maxMessageBytes, c.maxConnections, c.handshakeTimeoutMs, c.idleTimeoutMs, c.sendBufferBytes, c.slowConsumerMs, c.tokenRecheckMs],
      [1024 * 1024, 10_000, 10_000, 300_000, 4 * 1024 * 1024, 10_000, 10_000],
    );
    assert.equal(loadConfig({ LOCUS_IDLE_TIMEOUT_MS: '0' }).idleTimeoutMs, 0);
    assert.equal(loadConfig({}, ['--max-connections', '7']).maxConnections, 7);
    assert.throws(() => loadConfig({ LOCUS_MAX_MESSAGE_BYTES: '10' }), /LOCUS_MAX_MESSAGE_BYTES/);
    assert.throws(() => loadConfig({ LOCUS_MAX_CONNECTIONS: '0' }), /LOCUS_MAX_CONNECTIONS/);
    assert.throws(() => loadConfig({ LOCUS_HANDSHAKE_TIMEOUT_MS: '0' }), /LOCUS_HANDSHAKE_TIMEOUT_MS/);
    assert.throws(() => loadConfig({ LOCUS_SEND_BUFFER_BYTES: 'lots' }), /LOCUS_SEND_BUFFER_BYTES/);
    assert.throws(() => loadConfig({ LOCUS_SLOW_CONSUMER_MS: '-1' }), /LOCUS_SLOW_CONSUMER_MS/);
  });
});

describe('tokens', () => {
  it('generates distinct 256-bit secrets and hashes them with SHA-256', () => {
    const a = generateSecret();
    assert.notEqual(a, generateSecret());
    assert.ok(Buffer.from(a.slice(4), 'base64url').length === 32);
    assert.equal(hashSecret('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
  it('parses Bearer headers', () => {
    assert.equal(bearerSecret('Bearer abc'), 'abc');
    assert.equal(bearerSecret('bearer abc'), 'abc');
    assert.equal(bearerSecret('Basic abc'), null);
    assert.equal(bearerSecret('Bearer'), null);
    assert.equal(bearerSecret(undefined), null);
  });
});

describe('RateLimiter', () => {
  it('allows a burst, then refills at the rate, and says when to retry', () => {
    const limiter = new RateLimiter();
    const t = 1_000_000;
    for (let i = 0; i < 5; i++) assert.equal(limiter.take('k', 2, 5, t).allowed, true);
    const denied = limiter.take('k', 2, 5, t);
    assert.equal(denied.allowed, false);
    assert.equal(denied.retryAfterSeconds, 1);
    assert.equal(limiter.take('k', 2, 5, t + 499).allowed, false);
    assert.equal(limiter.take('k', 2, 5, t + 1000).allowed, true);
    assert.equal(limiter.take('other', 2, 5, t).allowed, true);
  });
});

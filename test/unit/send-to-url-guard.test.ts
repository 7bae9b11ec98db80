/**
 * The sendToUrl address guard (instructions/delivery/address-ranges.ts, url-guard.ts): which
 * targets are refused without LOCUS_SEND_TO_URL_ALLOW, what the allow list lets through, that
 * every resolved address is checked, and the setting's parsing in the configuration. Host names
 * resolve through the system (`localhost`) or a resolver the test gives.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../internal/config/config.js';
import { embeddedIPv4, emptyAllowList, parseAddress, parseAllowList, refusalOf } from '../../internal/instructions/delivery/address-ranges.js';
import { UrlGuard, shownUrl, type Resolver } from '../../internal/instructions/delivery/url-guard.js';

const refused = (text: string, allow = emptyAllowList): string | null => refusalOf(parseAddress(text) ?? assert.fail(`not an address: ${text}`), allow);

/** A resolver answering from a table (a fully qualified name's trailing dot ignored, as DNS does). */
const fixed = (table: Record<string, string[]>): Resolver => (host) => {
  const addresses = table[host.replace(/\.$/, '')];
  return addresses === undefined ? Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })) : Promise.resolve(addresses);
};

describe('address ranges', () => {
  it('parses IPv4 and IPv6 (compressed, bracketed, zoned, with a dotted tail) and nothing else', () => {
    assert.equal(parseAddress('10.1.2.3')?.value, 0x0a010203n);
    assert.equal(parseAddress('::1')?.value, 1n);
    assert.equal(parseAddress('[::1]')?.value, 1n);
    assert.equal(parseAddress('fe80::1%eth0')?.value, (0xfe80n << 112n) | 1n);
    assert.equal(parseAddress('2001:db8::8:800:200c:417a')?.value, 0x20010db8000000000008_0800_200c_417an);
    assert.equal(parseAddress('::ffff:127.0.0.1')?.value, (0xffffn << 32n) | 0x7f000001n);
    assert.equal(parseAddress('1:2:3:4:5:6:7:8')?.value, 0x0001_0002_0003_0004_0005_0006_0007_0008n);
    for (const bad of ['example.com', '256.1.1.1', '1.2.3', '::g', '', '[10.0.0.1]x']) assert.equal(parseAddress(bad), null, bad);
  });

  it('refuses loopback, private, link-local, shared, unspecified, multicast and reserved targets, naming what they are', () => {
    const cases: [string, RegExp][] = [
      ['127.0.0.1', /loopback/],
      ['127.255.0.9', /loopback/],
      ['::1', /loopback/],
      ['10.20.30.40', /private/],
      ['172.16.0.1', /private/],
      ['172.31.255.255', /private/],
      ['192.168.1.1', /private/],
      ['169.254.169.254', /link-local/],
      ['fe80::1', /link-local/],
      ['fd12:3456::1', /unique-local/],
      ['fc00::1', /unique-local/],
      ['100.64.0.1', /carrier-grade/],
      ['100.127.255.255', /carrier-grade/],
      ['0.0.0.0', /unspecified/],
      ['0.1.2.3', /unspecified/],
      ['::', /unspecified/],
      ['224.0.0.251', /multicast/],
      ['ff02::1', /multicast/],
      ['255.255.255.255', /broadcast/],
      ['::ffff:127.0.0.1', /::ffff:127\.0\.0\.1 leads to 127\.0\.0\.1 is a loopback address/],
      ['::ffff:10.0.0.1', /private/],
      ['::ffff:169.254.169.254', /link-local/],
      ['64:ff9b::a00:1', /leads to 10\.0\.0\.1 is a private/],
      ['2002:c0a8:0101::1', /leads to 192\.168\.1\.1/],
      ['::127.0.0.1', /IPv4-compatible/],
    ];
    for (const [address, why] of cases) assert.match(refused(address) ?? 'allowed', why, address);
  });

  it('lets public addresses through, in every form', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '169.253.255.255', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
      assert.equal(refused(address), null, address);
    }
    assert.deepEqual(embeddedIPv4(parseAddress('::ffff:1.2.3.4') ?? assert.fail())?.text, '1.2.3.4');
  });

  it('the allow list: a bare address allows that address alone, a CIDR its range, an IPv4 address its IPv6 forms too', () => {
    const allow = parseAllowList([' 127.0.0.1 ', '10.1.0.0/16', 'fd00::/8', '', 'Hooks.Internal.']);
    assert.equal(refused('127.0.0.1', allow), null);
    assert.match(refused('127.0.0.2', allow) ?? '', /loopback/);
    assert.equal(refused('::ffff:127.0.0.1', allow), null);
    assert.equal(refused('10.1.200.3', allow), null);
    assert.match(refused('10.2.0.1', allow) ?? '', /private/);
    assert.equal(refused('fd99::1', allow), null);
    assert.match(refused('::1', allow) ?? '', /loopback/);
    assert.deepEqual([...allow.hosts], ['hooks.internal']);
  });

  it('refuses an allow-list entry that is neither address, CIDR nor host name, naming it', () => {
    assert.throws(() => parseAllowList(['10.0.0.0/33']), /"10\.0\.0\.0\/33" is not a CIDR/);
    assert.throws(() => parseAllowList(['::/129']), /not a CIDR/);
    assert.throws(() => parseAllowList(['10.0.0.0/x']), /not a CIDR/);
    assert.throws(() => parseAllowList(['example.com/8']), /"example\.com\/8" is not an address/);
    assert.throws(() => parseAllowList(['http://x']), /"http:\/\/x" is not an address, a CIDR \(10\.0\.0\.0\/8\) or a host name/);
    assert.throws(() => parseAllowList(['bad host']), /not an address/);
  });
});

describe('UrlGuard', () => {
  it('refuses loopback and private targets without the allow setting: literals and names that resolve to them', async () => {
    const guard = new UrlGuard(emptyAllowList, fixed({ 'evil.test': ['10.0.0.7'], 'inner.test': ['169.254.169.254'] }));
    const cases: [string, RegExp][] = [
      ['http://127.0.0.1:8080/hook', /^127\.0\.0\.1 is a loopback address; LOCUS_SEND_TO_URL_ALLOW may allow it$/],
      ['http://[::1]/hook', /^::1 is a loopback address/],
      ['http://10.1.2.3/hook', /private/],
      ['http://169.254.169.254/latest/meta-data', /link-local/],
      ['http://[::ffff:7f00:1]/', /loopback/],
      ['http://2130706433/', /^127\.0\.0\.1 is a loopback/],
      ['http://0x7f.1/', /^127\.0\.0\.1 is a loopback/],
      ['http://evil.test/', /^evil\.test resolves to 10\.0\.0\.7 is a private address/],
      ['https://inner.test/', /link-local/],
      ['ftp://example.com/x', /^only http and https URLs are sent to, not ftp$/],
      ['file:///etc/passwd', /not file/],
      ['not a url', /^not a valid URL$/],
    ];
    for (const [url, why] of cases) {
      const vetting = await guard.vet(url);
      assert.equal(vetting.kind, 'refused', url);
      assert.match(vetting.kind === 'refused' ? vetting.reason : '', why, url);
    }
  });

  it('refuses `localhost`, resolved by the system (/etc/hosts) to a loopback address', async () => {
    const vetting = await new UrlGuard(emptyAllowList).vet('http://localhost:9/hook');
    assert.equal(vetting.kind, 'refused');
    assert.match(vetting.kind === 'refused' ? vetting.reason : '', /^localhost resolves to (127\.0\.0\.1|::1) is a loopback address/);
  });

  it('checks every address a name resolves to: one private among public ones refuses the target', async () => {
    const guard = new UrlGuard(emptyAllowList, fixed({ 'mixed.test': ['93.184.216.34', '2606:2800::1', '192.168.0.10'] }));
    const vetting = await guard.vet('https://mixed.test/x');
    assert.equal(vetting.kind, 'refused');
    assert.match(vetting.kind === 'refused' ? vetting.reason : '', /192\.168\.0\.10 is a private address/);
  });

  it('vets a public target and names the first address to connect to', async () => {
    const guard = new UrlGuard(emptyAllowList, fixed({ 'hooks.example.com': ['93.184.216.34', '2606:2800::1'] }));
    const vetting = await guard.vet('https://hooks.example.com/in?token=x');
    assert.equal(vetting.kind, 'vetted');
    if (vetting.kind === 'vetted') {
      assert.equal(vetting.target.address.text, '93.184.216.34');
      assert.equal(vetting.target.url.hostname, 'hooks.example.com');
    }
  });

  it('an allowed address or CIDR lets its targets through; an allowed host name whatever it resolves to', async () => {
    const allow = parseAllowList(['127.0.0.1', '10.0.0.0/8', 'hooks.internal']);
    const guard = new UrlGuard(allow, fixed({ 'hooks.internal': ['192.168.5.5'], 'other.internal': ['192.168.5.5'], 'ten.test': ['10.9.9.9'] }));
    assert.equal((await guard.vet('http://127.0.0.1:1/')).kind, 'vetted');
    assert.equal((await guard.vet('http://[::ffff:127.0.0.1]:1/')).kind, 'vetted');
    assert.equal((await guard.vet('http://hooks.internal/')).kind, 'vetted');
    assert.equal((await guard.vet('http://HOOKS.internal./')).kind, 'vetted');
    assert.equal((await guard.vet('http://ten.test/')).kind, 'vetted');
    assert.equal((await guard.vet('http://other.internal/')).kind, 'refused');
    assert.equal((await guard.vet('http://127.0.0.2/')).kind, 'refused');
  });

  it('a name that does not resolve is unresolved (may resolve later), not refused', async () => {
    const vetting = await new UrlGuard(emptyAllowList, fixed({})).vet('http://nowhere.test/');
    assert.deepEqual(vetting, { kind: 'unresolved', reason: 'nowhere.test did not resolve (ENOTFOUND)' });
  });

  it('log messages show a URL without credentials or query', () => {
    assert.equal(shownUrl('https://user:secret@hooks.example.com:8443/in/x?token=abc#f'), 'https://hooks.example.com:8443/in/x');
  });
});

describe('LOCUS_SEND_TO_URL_ALLOW and the other delivery settings', () => {
  it('defaults: nothing allowed, 5 s timeout, 3 retries, 1,000 deliveries and 1,000 log events per realm, 4 at once', () => {
    const config = loadConfig({});
    assert.deepEqual(config.sendToUrlAllow, []);
    assert.equal(config.sendToUrlTimeoutMs, 5000);
    assert.equal(config.sendToUrlRetries, 3);
    assert.equal(config.sendToUrlQueue, 1000);
    assert.equal(config.sendToUrlConcurrency, 4);
    assert.equal(config.instructionLogSize, 1000);
  });

  it('reads a comma-separated list and refuses a bad entry at start-up, naming the variable and the entry', () => {
    assert.deepEqual(loadConfig({ LOCUS_SEND_TO_URL_ALLOW: '127.0.0.1, 10.0.0.0/8 ,hooks.internal,' }).sendToUrlAllow, ['127.0.0.1', '10.0.0.0/8', 'hooks.internal']);
    assert.deepEqual(loadConfig({}, ['--send-to-url-allow', '::1']).sendToUrlAllow, ['::1']);
    assert.throws(
      () => loadConfig({ LOCUS_SEND_TO_URL_ALLOW: '127.0.0.1,10.0.0.0/40' }),
      (err: unknown) => err instanceof ConfigError && /^LOCUS_SEND_TO_URL_ALLOW must list addresses, CIDRs and host names separated by commas: "10\.0\.0\.0\/40" is not a CIDR/.test(err.message),
    );
    assert.throws(() => loadConfig({ LOCUS_SEND_TO_URL_QUEUE: '0' }), /LOCUS_SEND_TO_URL_QUEUE must be at least 1/);
    assert.equal(loadConfig({ LOCUS_SEND_TO_URL_RETRIES: '0' }).sendToUrlRetries, 0);
  });
});

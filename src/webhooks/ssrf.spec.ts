import { describe, expect, it } from 'vitest';
import ipaddr from 'ipaddr.js';
import {
  assertAllowed,
  embeddedIPv4,
  guardedLookup,
  oneShotAgent,
  PrivateTargets,
  refusedRange,
  TARGET_REFUSED,
  type WebhookResolver,
} from './ssrf.js';

describe('refusedRange (S10)', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.1.2.3', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::808:808', 'rfc6052'],
    ['2002:808:808::', '6to4'],
    // Every IPv6 form that embeds an IPv4 address is judged as that address first.
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::a9fe:a9fe', 'linkLocal'],
    ['::10.0.0.1', 'private'],
    ['::8.8.8.8', 'ipv4Compatible'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe:1::1', 'linkLocal'],
    // Teredo: server 65.54.227.120, client 127.0.0.1 stored inverted (0x80fffffe).
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'teredo'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b:1::a9fe:a9fe', 'linkLocal'],
  ])('refuses %s (%s)', (address, range) => {
    expect(refusedRange(address)).toBe(range);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(refusedRange(address)).toBeNull();
  });

  it('finds no embedded IPv4 address in a plain global address', () => {
    expect(embeddedIPv4(ipaddr.parse('2606:4700:4700::1111') as ipaddr.IPv6)).toBeNull();
    expect(embeddedIPv4(ipaddr.parse('::1') as ipaddr.IPv6)).toBeNull();
  });

  it('treats a non-address as refused', () => {
    expect(refusedRange('not-an-ip')).toBe('invalid');
  });
});

describe('guardedLookup', () => {
  const resolverOf = (addresses: { address: string; family: number }[]): WebhookResolver => ({
    resolve: () => Promise.resolve(addresses),
  });
  const run = (resolver: WebhookResolver, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; result: unknown }>((resolve) => {
      guardedLookup(resolver)('host.example', { all }, (err, address, family) =>
        resolve({ err, result: all ? address : { address, family } }),
      );
    });

  it('passes allowed addresses through, in both callback forms', async () => {
    const resolver = resolverOf([{ address: '93.184.216.34', family: 4 }]);
    expect(await run(resolver, false)).toEqual({ err: null, result: { address: '93.184.216.34', family: 4 } });
    expect(await run(resolver, true)).toEqual({ err: null, result: [{ address: '93.184.216.34', family: 4 }] });
  });

  it('refuses the whole name when any resolved address is refused', async () => {
    const resolver = resolverOf([
      { address: '93.184.216.34', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ]);
    const { err } = await run(resolver, true);
    expect(err?.code).toBe(TARGET_REFUSED);
  });

  it.each(['::127.0.0.1', '::a9fe:a9fe', '2002:7f00:1::', '2001:0:4136:e378:8000:63bf:80ff:fffe'])(
    'refuses a name resolving to %s, which embeds a refused IPv4 address',
    async (address) => {
      const { err } = await run(resolverOf([{ address, family: 6 }]), false);
      expect(err?.code).toBe(TARGET_REFUSED);
    },
  );
});

describe('oneShotAgent', () => {
  const resolver: WebhookResolver = { resolve: () => Promise.reject(new Error('no lookup expected')) };

  it.each(['::127.0.0.1', '::a9fe:a9fe', '2002:7f00:1::', '2001:0:4136:e378:8000:63bf:80ff:fffe'])(
    'refuses the literal [%s] with the guard on',
    (address) => {
      const url = new URL(`https://[${address}]/`);
      expect(() => oneShotAgent(url, { guard: true, resolver })).toThrow(/is not allowed/);
    },
  );
});

describe('PrivateTargets (an operator exception for connectors)', () => {
  const allowed = new PrivateTargets(['10.20.0.0/16', 'ERP.corp.internal', 'fd00:1::/48']);

  it('allows addresses inside a listed network and a listed host name, nothing else', () => {
    expect(allowed.allowsAddress('10.20.3.4')).toBe(true);
    expect(allowed.allowsAddress('::ffff:10.20.3.4')).toBe(true);
    expect(allowed.allowsAddress('fd00:1::5')).toBe(true);
    expect(allowed.allowsAddress('10.21.0.1')).toBe(false);
    expect(allowed.allowsAddress('127.0.0.1')).toBe(false);
    expect(allowed.allowsHost('erp.corp.internal')).toBe(true);
    expect(allowed.allowsHost('other.corp.internal')).toBe(false);
  });

  it('lets assertAllowed pass listed targets and still refuses the rest', () => {
    expect(() => assertAllowed(['10.20.3.4'], allowed)).not.toThrow();
    expect(() => assertAllowed(['10.20.3.4', '169.254.169.254'], allowed)).toThrow(/linkLocal/);
    expect(() => assertAllowed(['192.168.1.1'], allowed, 'erp.corp.internal')).not.toThrow();
    expect(() => assertAllowed(['192.168.1.1'], allowed, 'erp.other')).toThrow(/private/);
  });

  it('names entries that are neither a network nor a host name, or too wide a network', () => {
    expect(
      PrivateTargets.problems(['10.0.0.0/8', 'erp.internal', 'a b', '0.0.0.0/0', '10.0.0.1', 'fd00::/16']),
    ).toEqual([
      { index: 2, message: expect.stringMatching(/CIDR/) },
      { index: 3, message: 'network too wide' },
      { index: 4, message: expect.stringMatching(/CIDR/) },
      { index: 5, message: 'network too wide' },
    ]);
  });
});

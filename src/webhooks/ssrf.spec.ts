import { describe, expect, it } from 'vitest';
import { guardedLookup, refusedRange, TARGET_REFUSED, type WebhookResolver } from './ssrf.js';

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
    ['64:ff9b::a00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
  ])('refuses %s (%s)', (address, range) => {
    expect(refusedRange(address)).toBe(range);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(refusedRange(address)).toBeNull();
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
});

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Injectable } from '@nestjs/common';
import ipaddr from 'ipaddr.js';

/** Error code carried by a refused target, so the delivery job can tell it from a network failure. */
export const TARGET_REFUSED = 'WEBHOOK_TARGET_REFUSED';

export class TargetRefusedError extends Error {
  readonly code = TARGET_REFUSED;
  constructor(
    readonly address: string,
    readonly range: string,
  ) {
    super(`webhook target address ${address} is not allowed (${range})`);
    this.name = 'TargetRefusedError';
  }
}

/**
 * S10: the ranges a managed deployment never delivers to. Everything outside global unicast is refused:
 * loopback, private (RFC 1918), link-local (cloud metadata 169.254.169.254 lives there), unique-local
 * (fd00:ec2::254 too), CGNAT (100.100.100.200 too), multicast, unspecified, broadcast, reserved and the
 * IPv6 transition prefixes that embed an IPv4 address (6to4, Teredo, NAT64) and could hide one of those.
 * IPv4-mapped IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it carries.
 * Returns the range name of a refused address, or null when it is allowed.
 */
export function refusedRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'invalid';
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

/** The hostname of a URL as a resolver or isIP wants it (IPv6 literals lose their brackets). */
export function bareHostname(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * The name resolution used for webhook targets, as one injectable so the registration check and the
 * connection itself ask the same resolver (and tests can stand in for DNS, which cannot run here).
 */
@Injectable()
export class WebhookResolver {
  resolve(hostname: string): Promise<LookupAddress[]> {
    return new Promise((resolve, reject) => {
      dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
    });
  }
}

/** Throws TargetRefusedError when any address is refused: a name with one bad address is a bad name. */
export function assertAllowed(addresses: readonly string[]): void {
  for (const address of addresses) {
    const range = refusedRange(address);
    if (range) throw new TargetRefusedError(address, range);
  }
}

/**
 * A `lookup` for http(s) agents that resolves through the resolver and refuses blocked addresses, so
 * the address checked is the address connected to: a name that resolved to a public address at
 * registration and to 127.0.0.1 now (DNS rebinding) is refused here, at connect time.
 */
export function guardedLookup(resolver: WebhookResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolver.resolve(hostname).then(
      (all) => {
        try {
          assertAllowed(all.map((a) => a.address));
        } catch (err) {
          callback(err as NodeJS.ErrnoException, '', 0);
          return;
        }
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = family ? all.filter((a) => a.family === family) : all;
        if (usable.length === 0) {
          const err = Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
          callback(err, '', 0);
        } else if (options.all) {
          (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
        } else {
          callback(null, usable[0].address, usable[0].family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/**
 * Registration-time check (S10): a literal address is judged directly; a name must resolve, and to
 * allowed addresses only. Delivery checks again on the connected address, so this is a courtesy to
 * the registrant (an early, clear 400), not the guard itself.
 */
export async function checkTargetAtRegistration(url: URL, resolver: WebhookResolver): Promise<void> {
  const host = bareHostname(url);
  if (isIP(host)) {
    assertAllowed([host]);
    return;
  }
  const addresses = await resolver.resolve(host);
  assertAllowed(addresses.map((a) => a.address));
}

/**
 * The agent of one outgoing exchange with `url` (webhook delivery, IdP metadata, ERP calls): no
 * keep-alive, and with the guard on a literal address is judged here (net.connect never passes one to
 * `lookup`) and a name is resolved through the guarded lookup, so the address checked is the one
 * connected to. Throws TargetRefusedError for a refused literal address. The caller destroys the agent.
 */
export function oneShotAgent(
  url: URL,
  options: { guard: boolean; resolver: WebhookResolver },
): { agent: http.Agent; secure: boolean } {
  const host = bareHostname(url);
  if (options.guard && isIP(host)) assertAllowed([host]);
  const agentOptions = { keepAlive: false, ...(options.guard ? { lookup: guardedLookup(options.resolver) } : {}) };
  const secure = url.protocol === 'https:';
  return { agent: secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions), secure };
}

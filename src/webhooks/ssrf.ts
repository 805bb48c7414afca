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
 * IPv6 transition prefixes that embed an IPv4 address (6to4, Teredo, NAT64).
 * An IPv6 address that embeds an IPv4 address (see embeddedIPv4) is judged first as the IPv4 address it
 * carries, so a refused one is named by its IPv4 range (::127.0.0.1 and 2002:7f00:1:: are "loopback").
 * Returns the range name of a refused address, or null when it is allowed.
 */
export function refusedRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'invalid';
  const parsed = ipaddr.parse(withHexTail(address));
  if (parsed.kind() === 'ipv6') {
    const embedded = embeddedIPv4(parsed as ipaddr.IPv6);
    if (embedded) {
      const inner = embedded.ipv4.range();
      if (inner !== 'unicast') return inner;
      // IPv4-mapped carries a public IPv4 address as itself; the other forms stay refused by their prefix.
      if (embedded.form === 'ipv4Mapped') return null;
      return embedded.form;
    }
  }
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

/**
 * An IPv6 address with a dotted IPv4 tail written in hex (::127.0.0.1 as ::7f00:1), as the URL parser
 * writes it: ipaddr.js reads `::a.b.c.d` as IPv4-mapped, which it is not.
 */
function withHexTail(address: string): string {
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (!dotted || !ipaddr.IPv4.isValidFourPartDecimal(dotted[2])) return address;
  const [a, b, c, d] = ipaddr.IPv4.parse(dotted[2]).octets;
  return `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * The IPv4 address an IPv6 address carries, and the form it is carried in: IPv4-compatible (::/96, but
 * not :: and ::1), IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), 6to4 (2002::/16, bits
 * 16 to 48), Teredo (2001::/32, the client address inverted in the last 32 bits) and NAT64
 * (64:ff9b::/96 and the local-use 64:ff9b:1::/48, the last 32 bits). Null for any other address.
 */
export function embeddedIPv4(address: ipaddr.IPv6): { form: string; ipv4: ipaddr.IPv4 } | null {
  const p = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const zero = (from: number, to: number) => p.slice(from, to).every((part) => part === 0);
  if (zero(0, 6)) {
    // :: and ::1 are judged as themselves (unspecified, loopback), not as 0.0.0.0 and 0.0.0.1.
    if (p[6] === 0 && p[7] <= 1) return null;
    return { form: 'ipv4Compatible', ipv4: v4(p[6], p[7]) };
  }
  if (zero(0, 5) && p[5] === 0xffff) return { form: 'ipv4Mapped', ipv4: v4(p[6], p[7]) };
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return { form: 'rfc6145', ipv4: v4(p[6], p[7]) };
  if (p[0] === 0x2002) return { form: '6to4', ipv4: v4(p[1], p[2]) };
  if (p[0] === 0x2001 && p[1] === 0) return { form: 'teredo', ipv4: v4(~p[6] & 0xffff, ~p[7] & 0xffff) };
  if (p[0] === 0x64 && p[1] === 0xff9b && (zero(2, 6) || p[2] === 1)) {
    return { form: 'rfc6052', ipv4: v4(p[6], p[7]) };
  }
  return null;
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

/**
 * An operator's exception to the guard for one tenant's connectors (a private ERP, over a VPN): networks
 * in CIDR notation and host names. An address inside a listed network is allowed; a listed host name is
 * allowed whatever non-public addresses it resolves to. Nothing else changes.
 */
export class PrivateTargets {
  private readonly networks: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  private readonly hosts = new Set<string>();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      if (ipaddr.isValidCIDR(entry)) this.networks.push(ipaddr.parseCIDR(entry));
      else this.hosts.add(entry.toLowerCase());
    }
  }

  /** The entries that are neither a network in CIDR notation nor a host name, with why. */
  static problems(entries: readonly string[]): { index: number; message: string }[] {
    const out: { index: number; message: string }[] = [];
    entries.forEach((entry, index) => {
      if (ipaddr.isValidCIDR(entry)) {
        const [address, bits] = ipaddr.parseCIDR(entry);
        // Narrow by design: no network wider than a /8 (IPv4) or a /32 (IPv6), so "everything" cannot be listed.
        if (bits < (address.kind() === 'ipv4' ? 8 : 32)) out.push({ index, message: 'network too wide' });
      } else if (isIP(entry) || !HOST_NAME.test(entry)) {
        out.push({ index, message: 'must be a network in CIDR notation (10.20.0.0/16) or a host name' });
      }
    });
    return out;
  }

  get empty(): boolean {
    return this.networks.length === 0 && this.hosts.size === 0;
  }

  allowsHost(hostname: string): boolean {
    return this.hosts.has(hostname.toLowerCase());
  }

  allowsAddress(address: string): boolean {
    if (!ipaddr.isValid(address)) return false;
    let parsed = ipaddr.parse(withHexTail(address));
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
      parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    }
    return this.networks.some(([net, bits]) => net.kind() === parsed.kind() && parsed.match(net, bits));
  }
}

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;
const NO_EXCEPTION = new PrivateTargets([]);

/**
 * Throws TargetRefusedError when any address is refused: a name with one bad address is a bad name.
 * `hostname` and `allowed` carry an operator's exception (connectors only).
 */
export function assertAllowed(
  addresses: readonly string[],
  allowed: PrivateTargets = NO_EXCEPTION,
  hostname?: string,
): void {
  if (hostname !== undefined && allowed.allowsHost(hostname)) return;
  for (const address of addresses) {
    const range = refusedRange(address);
    if (range && !allowed.allowsAddress(address)) throw new TargetRefusedError(address, range);
  }
}

/**
 * A `lookup` for http(s) agents that resolves through the resolver and refuses blocked addresses, so
 * the address checked is the address connected to: a name that resolved to a public address at
 * registration and to 127.0.0.1 now (DNS rebinding) is refused here, at connect time.
 */
export function guardedLookup(resolver: WebhookResolver, allowed?: PrivateTargets): LookupFunction {
  return (hostname, options, callback) => {
    resolver.resolve(hostname).then(
      (all) => {
        try {
          assertAllowed(
            all.map((a) => a.address),
            allowed,
            hostname,
          );
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
export async function checkTargetAtRegistration(
  url: URL,
  resolver: WebhookResolver,
  allowed?: PrivateTargets,
): Promise<void> {
  const host = bareHostname(url);
  if (isIP(host)) {
    assertAllowed([host], allowed);
    return;
  }
  const addresses = await resolver.resolve(host);
  assertAllowed(
    addresses.map((a) => a.address),
    allowed,
    host,
  );
}

/**
 * The agent of one outgoing exchange with `url` (webhook delivery, IdP metadata, ERP calls): no
 * keep-alive, and with the guard on a literal address is judged here (net.connect never passes one to
 * `lookup`) and a name is resolved through the guarded lookup, so the address checked is the one
 * connected to. Throws TargetRefusedError for a refused literal address. The caller destroys the agent.
 */
export function oneShotAgent(
  url: URL,
  options: { guard: boolean; resolver: WebhookResolver; allowed?: PrivateTargets },
): { agent: http.Agent; secure: boolean } {
  const host = bareHostname(url);
  if (options.guard && isIP(host)) assertAllowed([host], options.allowed);
  const agentOptions = {
    keepAlive: false,
    ...(options.guard ? { lookup: guardedLookup(options.resolver, options.allowed) } : {}),
  };
  const secure = url.protocol === 'https:';
  return { agent: secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions), secure };
}

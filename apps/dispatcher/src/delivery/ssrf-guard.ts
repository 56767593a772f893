import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Raised (as a connection error) when a webhook's host resolves to a refused address. */
export class SsrfRefusedError extends Error {
  readonly code = 'ERR_SSRF_REFUSED';

  constructor(host: string) {
    super(`the address of ${host} is internal and not on the allow-list`);
    this.name = 'SsrfRefusedError';
  }
}

/**
 * Address ranges a webhook may not reach unless allowed: "this" network, loopback, private,
 * CGNAT, link-local (which holds the cloud metadata address 169.254.169.254), IETF protocol
 * assignments, benchmarking, multicast and reserved; for IPv6 also unspecified, loopback,
 * unique-local (fd00:ec2::254 is a metadata address), link-local, multicast and NAT64 (which
 * can name an internal IPv4 address). An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is
 * checked by `BlockList` against the IPv4 ranges.
 */
const REFUSED: readonly (readonly [string, number, 'ipv4' | 'ipv6'])[] = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * The SSRF guard (docs/architecture.md, "Security"). `lookup` replaces the connector's DNS lookup: it
 * resolves the host, checks every address, and hands only checked addresses to the socket,
 * so the connection goes to the address that was checked while TLS still uses the URL's
 * host name for SNI and certificate checks. Hosts written as IP literals never reach a
 * lookup: check them with `admits` before connecting.
 */
export class SsrfGuard {
  private readonly refused = new BlockList();
  private readonly allowed = new BlockList();

  /**
   * @param allowedCidrs CIDRs admitted although internal, e.g. `127.0.0.0/8`
   * @throws RangeError on a CIDR that is not one
   */
  constructor(allowedCidrs: readonly string[] = []) {
    for (const [network, prefix, type] of REFUSED) this.refused.addSubnet(network, prefix, type);
    for (const cidr of allowedCidrs) {
      const [network, prefixText] = cidr.split('/');
      const family = isIP(network);
      const prefix = Number(prefixText);
      const max = family === 4 ? 32 : 128;
      if (family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > max) {
        throw new RangeError(`not a CIDR: ${cidr}`);
      }
      this.allowed.addSubnet(network, prefix, family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** Whether a connection to this IP address may be made. */
  admits(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    return this.allowed.check(address, type) || !this.refused.check(address, type);
  }

  /** A `net.connect` lookup that refuses a host if any of its addresses is refused. */
  readonly lookup = (
    hostname: string,
    options: { family?: number | string; all?: boolean },
    callback: LookupCallback,
  ): void => {
    const family =
      options.family === 'IPv4' || options.family === 4
        ? 4
        : options.family === 'IPv6' || options.family === 6
          ? 6
          : 0;
    dnsLookup(hostname, { all: true, family }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, []);
      if (addresses.length === 0 || addresses.some((a) => !this.admits(a.address))) {
        return callback(new SsrfRefusedError(hostname), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

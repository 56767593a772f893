import { LookupAddress } from 'node:dns';

import { SsrfGuard, SsrfRefusedError } from './ssrf-guard';

type Lookup = SsrfGuard['lookup'];

/** Calls the guard's lookup and collects what it hands to the socket. */
function lookUp(
  lookup: Lookup,
  hostname: string,
  options: { family?: number | string; all?: boolean },
): Promise<{
  error: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family?: number;
}> {
  return new Promise((resolve) => {
    lookup(hostname, options, (error, address, family) => resolve({ error, address, family }));
  });
}

describe(SsrfGuard.name, () => {
  describe('admits', () => {
    const guard = new SsrfGuard();

    it.each(['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1'])(
      'admits the public IPv4 address %s',
      (address) => {
        expect(guard.admits(address)).toBe(true);
      },
    );

    it.each(['2606:4700::1111', '2001:4860:4860::8888'])(
      'admits the public IPv6 address %s',
      (address) => {
        expect(guard.admits(address)).toBe(true);
      },
    );

    it.each([
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['10.0.0.1', 'private'],
      ['10.255.255.255', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.254', 'private'],
      ['192.168.1.1', 'private'],
      ['100.64.0.1', 'CGNAT'],
      ['100.127.255.254', 'CGNAT'],
      ['169.254.169.254', 'cloud metadata (link-local)'],
      ['0.0.0.0', '"this" network'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['::', 'IPv6 unspecified'],
      ['::1', 'IPv6 loopback'],
      ['fe80::1', 'IPv6 link-local'],
      ['fc00::1', 'IPv6 unique-local'],
      ['fd00:ec2::254', 'the IPv6 metadata address'],
      ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
      ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
      ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
      ['ff02::1', 'IPv6 multicast'],
    ])('refuses %s (%s)', (address) => {
      expect(guard.admits(address)).toBe(false);
    });

    it('refuses what is not an IP address', () => {
      expect(guard.admits('localhost')).toBe(false);
      expect(guard.admits('')).toBe(false);
    });
  });

  describe('allow-list', () => {
    it('admits the allowed CIDR and nothing else internal', () => {
      const guard = new SsrfGuard(['127.0.0.0/8']);
      expect(guard.admits('127.0.0.1')).toBe(true);
      expect(guard.admits('127.1.2.3')).toBe(true);
      expect(guard.admits('10.0.0.1')).toBe(false);
      expect(guard.admits('169.254.169.254')).toBe(false);
      expect(guard.admits('::1')).toBe(false);
    });

    it('admits an allowed IPv6 prefix', () => {
      const guard = new SsrfGuard(['fd00::/8', '::1/128']);
      expect(guard.admits('fd00:ec2::254')).toBe(true);
      expect(guard.admits('::1')).toBe(true);
      expect(guard.admits('fe80::1')).toBe(false);
    });

    it.each(['10.0.0.0', '10.0.0.0/33', '::/129', 'intranet/8', '10.0.0.0/x', '/8'])(
      'throws on %s, which is not a CIDR',
      (cidr) => {
        expect(() => new SsrfGuard([cidr])).toThrow(RangeError);
      },
    );
  });

  describe('lookup', () => {
    it('refuses localhost unless allowed (all: true)', async () => {
      const { error, address } = await lookUp(new SsrfGuard().lookup, 'localhost', { all: true });
      expect(error).toBeInstanceOf(SsrfRefusedError);
      expect(error?.code).toBe('ERR_SSRF_REFUSED');
      expect(error?.message).toContain('localhost');
      expect(address).toEqual([]);
    });

    it('refuses localhost unless allowed (all: false)', async () => {
      const { error } = await lookUp(new SsrfGuard().lookup, 'localhost', { all: false });
      expect(error).toBeInstanceOf(SsrfRefusedError);
    });

    it('passes the checked addresses back when allowed (all: true)', async () => {
      const guard = new SsrfGuard(['127.0.0.0/8', '::1/128']);
      const { error, address } = await lookUp(guard.lookup, 'localhost', { all: true });
      expect(error).toBeNull();
      expect(Array.isArray(address)).toBe(true);
      const addresses = address as LookupAddress[];
      expect(addresses.length).toBeGreaterThan(0);
      for (const entry of addresses) {
        expect(['127.0.0.1', '::1']).toContain(entry.address);
        expect(entry.family).toBe(entry.address === '::1' ? 6 : 4);
      }
    });

    it('passes one checked address and its family back when allowed (all: false)', async () => {
      const guard = new SsrfGuard(['127.0.0.0/8', '::1/128']);
      const { error, address, family } = await lookUp(guard.lookup, 'localhost', {
        family: 4,
        all: false,
      });
      expect(error).toBeNull();
      expect(address).toBe('127.0.0.1');
      expect(family).toBe(4);
    });

    it('honours the family asked for', async () => {
      const guard = new SsrfGuard(['127.0.0.0/8', '::1/128']);
      const { error, address } = await lookUp(guard.lookup, '127.0.0.1', {
        family: 'IPv4',
        all: true,
      });
      expect(error).toBeNull();
      expect(address).toEqual([{ address: '127.0.0.1', family: 4 }]);
    });

    it('refuses a literal internal address handed to it', async () => {
      const { error } = await lookUp(new SsrfGuard().lookup, '169.254.169.254', { all: true });
      expect(error).toBeInstanceOf(SsrfRefusedError);
    });

    it('admits a public literal handed to it', async () => {
      const { error, address, family } = await lookUp(new SsrfGuard().lookup, '93.184.216.34', {});
      expect(error).toBeNull();
      expect(address).toBe('93.184.216.34');
      expect(family).toBe(4);
    });
  });
});

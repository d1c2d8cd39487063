import { isIP } from 'node:net';

/** An address or CIDR range, as HERALD_TRUSTED_PROXIES lists them. */
export interface Cidr {
  address: string;
  family: 'ipv4' | 'ipv6';
  /** Prefix length; absent for a single address. */
  bits?: number;
}

/** Parses `1.2.3.4`, `10.0.0.0/8`, `::1` or `fd00::/8`; undefined for anything else. */
export function parseCidr(entry: string): Cidr | undefined {
  const [address = '', bits, ...rest] = entry.split('/');
  const type = isIP(address);
  if (type === 0 || rest.length > 0) return undefined;
  const family = type === 6 ? 'ipv6' : 'ipv4';
  if (bits === undefined) return { address, family };
  if (!/^\d+$/.test(bits) || Number(bits) > (type === 6 ? 128 : 32)) return undefined;
  return { address, family, bits: Number(bits) };
}

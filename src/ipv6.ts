/**
 * The eight 16-bit groups of an IPv6 literal (`net.isIP(address) === 6`): `::` expanded, a dotted
 * IPv4 tail as its two groups, a zone (`%eth0`) left out.
 */
export function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0] as string;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const part = (s: string) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail ?? '');
  const zeros =
    tail === undefined ? [] : new Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0);
  return [...left, ...zeros, ...right];
}

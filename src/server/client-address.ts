/**
 * A client's address, and the key the per-address bounds count it under (rate limits, failed authentications,
 * sign-ins, MCP sessions, the workers' turns): an IPv6 client by its /64, the block one subscriber or host gets,
 * so that walking the addresses of one block gains nothing (docs/operations.md, "Limits and defences").
 */

/** IPv4 clients of a "::" listener, as uWS writes them: ::ffff:a.b.c.d in eight full groups. */
const IPV4_MAPPED = /^(?:0{1,4}:){5}ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/** `raw` as uWS gives it (IPv6 in eight full groups) written as usual: IPv4 dotted (mapped ones too), IPv6 compressed. */
export function clientAddress(raw: string): string {
  if (!raw.includes(':')) return raw;
  const mapped = IPV4_MAPPED.exec(raw);
  if (mapped) {
    const high = parseInt(mapped[1]!, 16);
    const low = parseInt(mapped[2]!, 16);
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  try {
    return new URL(`http://[${raw}]`).hostname.slice(1, -1);
  } catch {
    return raw; // not an IPv6 address after all (uWS gives none such): kept as it is
  }
}

/** The key `address` (clientAddress's) is counted under: an IPv4 address itself, an IPv6 address's first 64 bits. */
export function addressKey(address: string): string {
  if (!address.includes(':')) return `address:${address}`;
  const [head = '', tail] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill('0');
  const groups = [...headGroups, ...zeros, ...tailGroups];
  return `address:${groups.slice(0, 4).join(':')}::/64`;
}

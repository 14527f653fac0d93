import { BlockList, isIPv4, isIPv6, SocketAddress } from 'node:net';

/**
 * Who a request comes from, for the budgets of callers without credentials: the socket's peer, or, when the
 * peer is a trusted reverse proxy, the last address its X-Forwarded-For names that is not itself a trusted
 * proxy (the ones before it are whatever the client wrote). Without trusted proxies the header is ignored:
 * anyone can write it.
 */
export function clientAddress(peerText: string, forwardedFor: string, trustedProxies: ReadonlySet<string>): string {
  const peer = shortForm(peerText);
  if (trustedProxies.size === 0 || !trustedProxies.has(peer) || forwardedFor === '') return peer;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!.trim();
    if (hop !== '' && !trustedProxies.has(hop)) return hop;
  }
  return peer;
}

/**
 * uWS writes an IPv6 peer in full, and an IPv4 client of a dual-stack listener (`::`) as such an address
 * (`0000:…:ffff:7f00:0001`): the usual short form, and an IPv4-mapped one as IPv4, as trusted proxies are
 * written and as clientKey groups addresses (else every IPv4 client would share the budget of one /64).
 */
function shortForm(address: string): string {
  if (!isIPv6(address)) return address;
  const short = new SocketAddress({ address, family: 'ipv6' }).address;
  return short.startsWith('::ffff:') && isIPv4(short.slice(7)) ? short.slice(7) : short;
}

/**
 * The key a client's budget is kept under: an IPv4 address as it is (also when written IPv4-mapped), an IPv6
 * address by its /64 network, since one host is commonly given a whole /64 and could otherwise take a fresh
 * budget from each of its addresses.
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether an address is this machine's, in any notation (BlockList also matches IPv4-mapped IPv6). */
export function isLoopback(address: string): boolean {
  return LOOPBACK.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
}

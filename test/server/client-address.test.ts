import t from 'tap';
import { addressKey, clientAddress } from '../../src/server/client-address.js';

t.test('addresses as uWS gives them are written as usual', async (t) => {
  t.equal(clientAddress('192.0.2.7'), '192.0.2.7', 'IPv4 from an IPv4 listener');
  t.equal(clientAddress('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1', 'an IPv4 client of a "::" listener');
  t.equal(clientAddress('0000:0000:0000:0000:0000:ffff:c000:0207'), '192.0.2.7');
  t.equal(clientAddress('0000:0000:0000:0000:0000:0000:0000:0001'), '::1', 'IPv6 compressed');
  t.equal(clientAddress('2001:0db8:0000:0000:0000:ff00:0042:8329'), '2001:db8::ff00:42:8329');
  t.equal(clientAddress('not:an:address'), 'not:an:address', 'anything else kept as it is');
});

t.test('per-address bounds count an IPv6 client by its /64', async (t) => {
  t.equal(addressKey('192.0.2.7'), 'address:192.0.2.7');
  t.not(addressKey('192.0.2.7'), addressKey('192.0.2.8'), 'IPv4 addresses apart');
  const one = addressKey(clientAddress('2001:0db8:0001:0002:0000:0000:0000:0001'));
  t.equal(one, 'address:2001:db8:1:2::/64');
  t.equal(addressKey(clientAddress('2001:0db8:0001:0002:ffff:1234:5678:9abc')), one, 'another address of the same /64 is the same caller');
  t.not(addressKey(clientAddress('2001:0db8:0001:0003:0000:0000:0000:0001')), one, 'the next /64 is another');
  t.equal(addressKey('::1'), 'address:0:0:0:0::/64', 'zeros written out to the fourth group');
  t.equal(addressKey('2001:db8::'), 'address:2001:db8:0:0::/64');
  t.equal(addressKey('2001:db8:1:2:3::'), 'address:2001:db8:1:2::/64');
  t.equal(addressKey('fe80::1:2:3:4'), 'address:fe80:0:0:0::/64');
});

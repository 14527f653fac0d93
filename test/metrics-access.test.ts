import t from 'tap';
import { startTestServer } from './helpers/server.ts';

/** GET /metrics describes every organization's load and the disk: not for strangers. */
const scrape = (url: string, headers: Record<string, string> = {}) => fetch(`${url}/metrics`, { headers });

t.test('without a token /metrics answers only clients on this machine', async (t) => {
  const { url } = await startTestServer(t, { trustedProxies: ['127.0.0.1'] });
  const local = await scrape(url);
  t.equal(local.status, 200, 'a scraper on this machine reads it');
  t.match(await local.text(), /chat_http_requests_total|chat_/);
  // Behind a trusted proxy the client is the address it names: a client elsewhere is refused.
  const remote = await scrape(url, { 'X-Forwarded-For': '203.0.113.9' });
  t.equal(remote.status, 403, 'a client on another machine is refused');
  t.match(await remote.json(), { result: 'error', msg: /CHAT_METRICS_TOKEN/ });
  t.equal((await fetch(`${url}/health`, { headers: { 'X-Forwarded-For': '203.0.113.9' } })).status, 200, '/health stays open to load balancers');
});

t.test('with CHAT_METRICS_TOKEN /metrics asks every client for it as a bearer credential', async (t) => {
  const { url } = await startTestServer(t, { metricsToken: 'scrape-Token-0123456789' });
  const none = await scrape(url);
  t.equal(none.status, 401, 'no token, even from this machine');
  t.equal(none.headers.get('www-authenticate'), 'Bearer realm="metrics"');
  t.equal((await scrape(url, { Authorization: 'Bearer scrape-Token-012345678X' })).status, 401, 'a wrong token');
  t.equal((await scrape(url, { Authorization: 'Basic c2NyYXBlOg==' })).status, 401, 'Basic credentials are not the token');
  const right = await scrape(url, { Authorization: 'Bearer scrape-Token-0123456789' });
  t.equal(right.status, 200, 'the token opens it');
  t.match(await right.text(), /^# HELP /m);
});

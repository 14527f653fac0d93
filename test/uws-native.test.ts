import t from 'tap';
import { uwsBinary } from '../src/uws-native.ts';
import { startTestServer } from './helpers/server.ts';

// uWebSockets.js quietly falls back to a pure-JS server when its binary does not load; that fallback is
// many times slower, so a test must fail when it is the one in use.
t.test('the native uWebSockets.js binary is loaded, not the pure-JS fallback', async (t) => {
  t.notOk(process.env.UWS_USE_FALLBACK, 'UWS_USE_FALLBACK is not set');
  const binary = uwsBinary();
  t.equal(binary.native, true, 'native addon in use');
  t.match(binary.file, /uws_linux_x64_\d+\.node$/, `binary file ${binary.file}`);
});

t.test('the server answers through it', async (t) => {
  const { api } = await startTestServer(t);
  const response = await api.get('/users/me');
  t.equal(response.status, 200);
  t.equal(response.headers.get('uwebsockets'), '20', 'uWS identifies itself in the response headers');
});

import { chromium } from 'playwright-core';
import t from 'tap';
import { png } from './helpers/images.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';
import { CHROMIUM, chromiumMissing, LAUNCH_ARGS, screenshot, signIn } from './helpers/web.ts';

// The web client as a daily chat client (issue 19): rendering math, code and images; uploads, the emoji
// picker and autocomplete; inbox, recent conversations, starred messages, reading as one scrolls and message
// links. Two people in separate browser contexts of one Chromium.
const BOB_PASSWORD = 'a-Strong-passw0rd-for-bob';

/** An upload through the API, as another client would make it: answers its /user_uploads/ path. */
async function uploadFile(api: ApiClient, name: string, bytes: Uint8Array): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)]), name);
  const auth = `Basic ${Buffer.from(`${api.credentials!.email}:${api.credentials!.key}`).toString('base64')}`;
  const response = await fetch(`${api.baseUrl}/api/v1/user_uploads`, { method: 'POST', headers: { Authorization: auth }, body: form });
  const answer = await response.json() as { url: string };
  if (response.status !== 200) throw new Error(`upload failed: ${JSON.stringify(answer)}`);
  return answer.url;
}

const missing = chromiumMissing();
if (missing) {
  t.fail(missing);
} else {
  t.test('the web client for a day of chat, as two users', async (t) => {
    const server = await startTestServer(t, { rateLimit: null });
    const { api } = server;
    const bob = await api.createUser('bob@example.com', 'Bob Marsh', BOB_PASSWORD);
    t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'general', description: 'Everyone' }, { name: 'design' }], principals: [server.owner.email, bob.email] })).status, 200);
    const generalId: number = (await api.get('/get_stream_id', { stream: 'general' })).body.stream_id;

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
    t.teardown(() => browser.close());
    const ownerContext = await browser.newContext({ viewport: { width: 1366, height: 820 }, colorScheme: 'light' });
    const bobContext = await browser.newContext({ viewport: { width: 1366, height: 820 }, colorScheme: 'light' });
    const owner = await ownerContext.newPage();
    const bobPage = await bobContext.newPage();
    const errors: string[] = [];
    for (const page of [owner, bobPage]) page.on('pageerror', (error) => errors.push(error.message));
    const fetched: string[] = [];
    owner.on('request', (request) => fetched.push(new URL(request.url()).pathname));

    await signIn(owner, server.url, server.owner.email, server.ownerPassword);
    await owner.getByRole('heading', { name: '#design' }).waitFor();
    await signIn(bobPage, server.url, bob.email, BOB_PASSWORD);
    await bobPage.getByRole('heading', { name: '#design' }).waitFor();

    await t.test('math is typeset by KaTeX and code highlighted, both loaded only when a message needs them', async (t) => {
      await owner.getByRole('button', { name: /^Channel general/ }).click();
      await api.post('/messages', { type: 'stream', to: String(generalId), topic: 'plain', content: 'Nothing special here' });
      await owner.locator('.msg').filter({ hasText: 'Nothing special here' }).waitFor();
      t.notOk(fetched.some((path) => /\/static\/(math|code)-/.test(path)), 'no KaTeX or highlight.js for plain messages');

      const content = 'Energy: $$E=mc^2$$\n```math\n\\int_0^1 x\\,dx = \\frac{1}{2}\n```\n```python\ndef square(x):\n    return x ** 2  # squared\n```';
      const sent = (await api.post('/messages', { type: 'stream', to: String(generalId), topic: 'formulas', content })).body.id;
      const message = owner.locator(`.msg[data-id="${sent}"]`);
      await message.locator('.katex .katex-html').first().waitFor();
      t.equal(await message.locator('.katex-display').count(), 1, 'the math block is displayed');
      t.match(await message.locator('annotation').first().textContent(), 'E=mc^2', 'typeset from the TeX source');
      t.notOk(await message.getByText('$$').isVisible().catch(() => false), 'no raw dollars');
      await owner.waitForFunction(() => [...document.styleSheets].some((sheet) => sheet.href?.includes('/static/math-')));
      const fontSize = await message.locator('.katex').first().evaluate((node) => getComputedStyle(node).fontFamily);
      t.match(fontSize, /KaTeX_Main/, "KaTeX's style sheet applies");
      const keyword = message.locator('.codehilite .hljs-keyword').filter({ hasText: 'def' });
      await keyword.waitFor();
      t.not(await keyword.evaluate((node) => getComputedStyle(node).color), await message.locator('.codehilite code').evaluate((node) => getComputedStyle(node).color), 'keywords are coloured');
      t.ok(await message.locator('.codehilite .hljs-comment').filter({ hasText: '# squared' }).isVisible(), 'comments too');
      t.ok(fetched.some((path) => /\/static\/math-.*\.js$/.test(path)) && fetched.some((path) => /\/static\/code-.*\.js$/.test(path)), 'the chunks were fetched');
      await screenshot(owner, 'math-and-code.png');
    });

    await t.test('an uploaded image is previewed in the message, fetched with the credentials', async (t) => {
      const path = await uploadFile(api.as(bob), 'red-dot.png', png([220, 30, 30, 255]));
      const sent = (await api.as(bob).post('/messages', { type: 'stream', to: String(generalId), topic: 'pictures', content: `Look: [red-dot.png](${path})` })).body.id;
      const preview = owner.locator(`.msg[data-id="${sent}"] .message_inline_image img`);
      await preview.waitFor();
      await owner.waitForFunction((id) => {
        const image = document.querySelector<HTMLImageElement>(`.msg[data-id="${id}"] .message_inline_image img`);
        return image !== null && image.complete && image.naturalWidth === 1;
      }, sent);
      t.match(await preview.getAttribute('src'), /^blob:/, 'shown from the bytes fetched with Basic auth');
      t.equal(await preview.getAttribute('alt'), 'red-dot.png');
      const tab = ownerContext.waitForEvent('page');
      await owner.locator(`.msg[data-id="${sent}"]`).getByRole('link', { name: 'Open red-dot.png' }).click();
      const opened = await tab;
      await opened.waitForURL(/\/user_uploads\/temporary\//);
      t.pass('a click opens the file in a tab through a link that needs no credentials');
      await opened.close();
    });

    await t.test('no script errors', async (t) => {
      t.same(errors, [], 'in either page');
    });
  });
}

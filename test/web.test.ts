import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page, type WebSocketRoute } from 'playwright-core';
import t from 'tap';
import { CHROMIUM, chromiumMissing, LAUNCH_ARGS, SCREENSHOTS, signIn, uploadEmoji } from './helpers/web.ts';
import { startTestServer } from './helpers/server.ts';

const OUTPUT = SCREENSHOTS;
const BOB_PASSWORD = 'a-Strong-passw0rd-for-bob';

const missing = chromiumMissing();
if (missing) {
  t.fail(missing);
} else {
  t.test('the web client in Chromium, as two users', async (t) => {
    // No rate limit: the test writes a long history through the API faster than any person could.
    const server = await startTestServer(t, { rateLimit: null });
    const { api } = server;
    const bob = await api.createUser('bob@example.com', 'Bob Marsh', BOB_PASSWORD);
    const created = await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'general', description: 'Everyone' }], principals: [server.owner.email, bob.email] });
    t.equal(created.status, 200, 'channel created');
    const generalId: number = (await api.get('/get_stream_id', { stream: 'general' })).body.stream_id;

    const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
    t.teardown(() => browser.close());
    const ownerContext = await browser.newContext({ viewport: { width: 1366, height: 820 }, colorScheme: 'light' });
    const bobContext = await browser.newContext({ viewport: { width: 1366, height: 820 }, colorScheme: 'light' });
    const owner = await ownerContext.newPage();
    const bobPage = await bobContext.newPage();
    const errors: string[] = [];
    for (const page of [owner, bobPage]) page.on('pageerror', (error) => errors.push(error.message));
    // Deleting a message asks first.
    owner.on('dialog', (dialog) => void dialog.accept());
    const longPolls = (page: Page) => {
      const seen = { count: 0 };
      page.on('request', (request) => void (request.method() === 'GET' && /\/api\/v1\/events\?/.test(request.url()) && seen.count++));
      return seen;
    };
    const ownerPolls = longPolls(owner);
    const bobPolls = longPolls(bobPage);
    let bobRegistrations = 0;
    bobPage.on('request', (request) => void (request.url().endsWith('/api/v1/register') && bobRegistrations++));
    // Bob's event sockets pass through the test, which can drop one as a flaky network would.
    const bobSockets: string[] = [];
    let bobSocket: WebSocketRoute | null = null;
    await bobPage.routeWebSocket(/\/api\/v1\/events\/socket/, (socket) => {
      bobSockets.push(socket.url());
      socket.connectToServer();
      bobSocket = socket;
    });
    const bobQueue = () => new URL(bobSockets.at(-1)!).searchParams.get('queue_id');

    await t.test('the page and its bundle are served with types and caching', async (t) => {
      const page = await fetch(`${server.url}/`);
      t.equal(page.status, 200);
      t.match(page.headers.get('content-type'), /^text\/html/);
      t.equal(page.headers.get('cache-control'), 'no-cache');
      t.match(page.headers.get('content-security-policy'), /script-src 'self'/);
      t.match(page.headers.get('content-security-policy'), /img-src 'self' data: blob:;/, 'images only from this server: no read receipts to third-party hosts');
      const html = await page.text();
      const script = /src="(\/static\/main-[A-Z0-9]+\.js)"/.exec(html)?.[1];
      const style = /href="(\/static\/main-[A-Z0-9]+\.css)"/.exec(html)?.[1];
      t.ok(script && style, 'index.html names the hashed bundle files');
      const js = await fetch(`${server.url}${script}`);
      t.equal(js.status, 200);
      t.match(js.headers.get('content-type'), /^text\/javascript/);
      t.match(js.headers.get('cache-control'), /immutable/);
      const css = await fetch(`${server.url}${style}`);
      t.match(css.headers.get('content-type'), /^text\/css/);
      t.equal((await fetch(`${server.url}/static/missing.js`)).status, 404);
      t.equal((await fetch(`${server.url}/api/v1/nope`)).status, 404, 'the API is still behind it');
    });

    await t.test('a wrong password shows an error; the right one signs in', async (t) => {
      await signIn(owner, server.url, server.owner.email, 'not-the-password');
      const alert = owner.locator('.login-card [role="alert"]');
      await alert.filter({ hasText: /incorrect/i }).waitFor();
      t.match(await alert.textContent(), /username or password is incorrect/i);
      await owner.getByLabel('Password').fill(server.ownerPassword);
      await owner.getByRole('button', { name: 'Sign in' }).click();
      await owner.getByRole('button', { name: /^Channel general/ }).waitFor();
      t.ok(await owner.evaluate(() => localStorage.getItem('chat.credentials')), 'the API key is kept in the browser');
      await signIn(bobPage, server.url, bob.email, BOB_PASSWORD);
      await bobPage.getByRole('button', { name: /^Channel general/ }).waitFor();
    });

    await t.test('a message sent by one user appears live for the other', async (t) => {
      // Both open #general (the default narrow: the only channel).
      await owner.getByRole('heading', { name: '#general' }).waitFor();
      await bobPage.getByRole('heading', { name: '#general' }).waitFor();
      await owner.getByLabel('Topic', { exact: true }).fill('greetings');
      const text = owner.getByRole('textbox', { name: 'Message' });
      await text.fill('Hello **Bob**, welcome aboard');
      // enter_sends is off by default: Ctrl+Enter sends, Enter alone is a new line.
      await text.press('Control+Enter');
      const seen = bobPage.locator('.msg').filter({ hasText: 'Hello Bob, welcome aboard' });
      await seen.waitFor();
      t.equal(await seen.locator('strong').textContent(), 'Bob', 'server-rendered HTML');
      t.equal(await text.inputValue(), '', 'the compose box is cleared');
      await bobPage.getByRole('button', { name: /^Topic greetings/ }).waitFor();
    });

    await t.test('events arrive over the WebSocket, not by long-polling', async (t) => {
      await owner.getByRole('status', { name: 'Connected by WebSocket' }).waitFor();
      await bobPage.getByRole('status', { name: 'Connected by WebSocket' }).waitFor();
      t.equal(ownerPolls.count + bobPolls.count, 0, 'no GET /events');
      t.ok(bobSockets.length >= 1 && bobQueue(), 'the socket names the registered queue');
    });

    await t.test('typing, reactions, edits and deletions reach the other side', async (t) => {
      await bobPage.getByRole('button', { name: /^Topic greetings/ }).click();
      await bobPage.getByRole('textbox', { name: 'Message' }).pressSequentially('Thanks', { delay: 20 });
      await owner.locator('.typing').filter({ hasText: 'Bob Marsh is typing…' }).waitFor();
      t.pass('typing notice shown');

      const bobsView = bobPage.locator('.msg').filter({ hasText: 'welcome aboard' });
      await bobsView.hover();
      await bobsView.getByRole('button', { name: 'React with thumbs up' }).click();
      const chip = owner.locator('.msg').filter({ hasText: 'welcome aboard' }).locator('.reaction');
      await chip.filter({ hasText: '1' }).waitFor();
      t.match(await chip.getAttribute('aria-label'), /by Bob Marsh/);

      const mine = owner.locator('.msg').filter({ hasText: 'welcome aboard' });
      await mine.hover();
      await mine.getByRole('button', { name: 'Edit message' }).click();
      const editor = owner.getByRole('textbox', { name: 'Edit message' });
      t.equal(await editor.inputValue(), 'Hello **Bob**, welcome aboard', 'the editor holds the Markdown source');
      await editor.fill('Hello **Bob**, welcome aboard!');
      await owner.getByRole('button', { name: 'Save edit' }).click();
      await bobPage.locator('.msg').filter({ hasText: 'welcome aboard!' }).locator('.edited').waitFor();

      const doomed = (await api.post('/messages', { type: 'stream', to: String(generalId), topic: 'greetings', content: 'A message to delete' })).body.id;
      const ownersCopy = owner.locator(`.msg[data-id="${doomed}"]`);
      await ownersCopy.hover();
      await ownersCopy.getByRole('button', { name: 'Delete message' }).click();
      await bobPage.locator(`.msg[data-id="${doomed}"]`).waitFor({ state: 'detached' });
      t.pass('deleted for both');
    });

    await t.test('unread counts, drafts and a lost event queue', async (t) => {
      // Bob looks at his notes; a new channel message is counted as unread.
      await bobPage.getByRole('button', { name: /^Direct messages with Bob Marsh \(you\)/ }).click();
      await bobPage.getByRole('textbox', { name: 'Message' }).fill('note to self: reply later');
      await api.post('/messages', { type: 'stream', to: String(generalId), topic: 'greetings', content: 'Are you there?' });
      await bobPage.getByRole('button', { name: 'Channel general, 1 unread' }).waitFor();
      await t.resolves(async () => {
        for (let i = 0; i < 50; i++) {
          const drafts = await api.as(bob).get('/drafts');
          if (drafts.body.drafts?.some((draft: { content: string }) => draft.content === 'note to self: reply later')) return;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        throw new Error('draft not saved');
      }, 'the unsent text is saved as a draft on the server');

      // The server forgets Bob's queue: his socket is closed with BAD_EVENT_QUEUE_ID, and he registers again.
      const registered = bobRegistrations;
      const lost = bobQueue();
      t.equal((await api.as(bob).delete('/events', { queue_id: lost })).status, 200);
      await api.post('/messages', { type: 'stream', to: String(generalId), topic: 'greetings', content: 'Still there?' });
      await bobPage.getByRole('button', { name: 'Channel general, 2 unread' }).waitFor();
      await bobPage.getByRole('button', { name: /^Channel general/ }).click();
      await bobPage.locator('.msg').filter({ hasText: 'Still there?' }).waitFor();
      await api.post('/messages', { type: 'stream', to: String(generalId), topic: 'greetings', content: 'After the new queue' });
      await bobPage.locator('.msg').filter({ hasText: 'After the new queue' }).waitFor();
      t.ok(bobRegistrations > registered, 'registered again');
      t.not(bobQueue(), lost, 'and listens on the new queue');
    });

    await t.test('a dropped WebSocket: the state is shown, it reconnects with backoff and resumes the same queue', async (t) => {
      await bobPage.getByRole('status', { name: 'Connected by WebSocket' }).waitFor();
      const registered = bobRegistrations;
      const queue = bobQueue();
      const sockets = bobSockets.length;
      // The network drops the socket, and for a while the server cannot be reached: the reconnects fail.
      let refused = 0;
      await bobPage.route('**/api/v1/events/socket/ticket', (route) => {
        refused++;
        return route.abort('connectionrefused');
      });
      await bobSocket!.close({ code: 1011, reason: 'dropped by the network' });
      await bobPage.getByRole('status', { name: 'Reconnecting…' }).waitFor();
      await bobPage.locator('.banner').filter({ hasText: /^Cannot reach the server\. Trying again in \d+ s…$/ }).waitFor();
      await api.post('/messages', { type: 'stream', to: String(generalId), topic: 'greetings', content: 'Sent while Bob was away' });
      for (let i = 0; i < 200 && refused < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      t.ok(refused >= 2, `tried again after a pause (${refused} attempts refused)`);
      await bobPage.unroute('**/api/v1/events/socket/ticket');
      await bobPage.locator('.msg').filter({ hasText: 'Sent while Bob was away' }).waitFor();
      await bobPage.getByRole('status', { name: 'Connected by WebSocket' }).waitFor();
      t.ok(await bobPage.locator('.banner').isHidden(), 'the banner is gone');
      t.equal(bobRegistrations, registered, 'resumed: no new registration, nothing reloaded');
      t.ok(bobSockets.length > sockets, 'a new socket');
      t.equal(bobQueue(), queue, 'on the same queue');
      t.ok(Number(new URL(bobSockets.at(-1)!).searchParams.get('last_event_id')) >= 0, 'from the last event seen');
      t.equal(bobPolls.count, 0, 'never fell back to long-polling while the server was away');
    });

    await t.test('where no WebSocket can be had, the client long-polls', async (t) => {
      // Bob opens a second tab, behind a server or proxy without the socket endpoint.
      const tab = await bobContext.newPage();
      tab.on('pageerror', (error) => errors.push(error.message));
      const polls = longPolls(tab);
      await tab.route('**/api/v1/events/socket/ticket', (route) => route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ result: 'error', msg: 'Not found', code: 'NOT_FOUND' }) }));
      await tab.goto(server.url);
      await tab.getByRole('status', { name: 'Connected by long-polling' }).waitFor();
      await tab.getByRole('button', { name: /^Channel general/ }).click();
      await api.post('/messages', { type: 'stream', to: String(generalId), topic: 'greetings', content: 'Delivered by long-polling' });
      await tab.locator('.msg').filter({ hasText: 'Delivered by long-polling' }).waitFor();
      t.ok(polls.count >= 1, 'GET /events');
      await tab.close();
    });

    await t.test('a new channel from the sidebar, and Enter sends once the setting says so', async (t) => {
      await owner.getByRole('textbox', { name: 'Channel name to create or join' }).fill('random');
      await owner.getByRole('button', { name: 'Create or join channel' }).click();
      await owner.getByRole('heading', { name: '#random' }).waitFor();
      await owner.getByRole('checkbox', { name: 'Press Enter to send' }).check();
      await owner.locator('.compose-hint').filter({ hasText: /^Enter to send/ }).waitFor();
      await owner.getByLabel('Topic', { exact: true }).fill('first');
      await owner.getByRole('textbox', { name: 'Message' }).fill('The first message here');
      await owner.getByRole('textbox', { name: 'Message' }).press('Enter');
      await owner.locator('.msg').filter({ hasText: 'The first message here' }).waitFor();
      t.equal((await api.get('/users/me/subscriptions')).body.subscriptions.length, 2, 'created and subscribed');
    });

    await t.test('rendered content: emoji, custom emoji, spoilers, the description, links that navigate', async (t) => {
      await uploadEmoji(api, 'party_parrot');
      const randomId: number = (await api.get('/get_stream_id', { stream: 'random' })).body.stream_id;
      const content = [
        'Launch :rocket: with :party_parrot:, see #**general>greetings** and ask @**Bob Marsh**',
        '',
        '```spoiler The ending',
        'The butler did it',
        '```',
      ].join('\n');
      const sent = await api.post('/messages', { type: 'stream', to: String(randomId), topic: 'fun', content });
      t.equal(sent.status, 200);
      const message = owner.locator(`.msg[data-id="${sent.body.id}"]`);
      await message.waitFor();
      const rocket = message.getByRole('img', { name: 'rocket' });
      t.equal(await rocket.textContent(), '🚀', 'the code point of emoji-1f680 is drawn, not ":rocket:"');
      const parrot = message.locator('img.emoji[alt=":party_parrot:"]');
      await owner.waitForFunction((id) => {
        const image = document.querySelector<HTMLImageElement>(`.msg[data-id="${id}"] img.emoji`);
        return image !== null && image.complete && image.naturalWidth > 0;
      }, sent.body.id);
      const box = await parrot.boundingBox();
      t.ok(box && box.height > 10 && box.height < 40, `the custom emoji image is loaded and sized like text (${box?.height}px)`);

      const hidden = message.getByText('The butler did it');
      t.notOk(await hidden.isVisible(), 'the spoiler starts closed');
      const header = message.getByRole('button', { name: /The ending/ });
      t.equal(await header.getAttribute('aria-expanded'), 'false');
      await header.click();
      await hidden.waitFor({ state: 'visible' });
      t.equal(await header.getAttribute('aria-expanded'), 'true', 'opened by a click');
      await header.click();
      await hidden.waitFor({ state: 'hidden' });
      t.pass('and closed by another');

      await api.patch(`/streams/${generalId}`, { description: 'Build **all** the things' });
      await message.getByRole('link', { name: '#general > greetings' }).click();
      await owner.getByRole('heading', { name: '#general › greetings' }).waitFor();
      t.match(owner.url(), new RegExp(`#channel/${generalId}/greetings$`), 'the link opened the topic in the client, not a new tab');
      const subtitle = owner.locator('.pane-subtitle');
      await subtitle.locator('strong').filter({ hasText: 'all' }).waitFor();
      t.equal((await subtitle.textContent())?.trim(), 'Build all the things', 'rendered_description, not the Markdown source');

      await owner.getByRole('button', { name: /^Channel random/ }).click();
      await message.getByRole('link', { name: /Bob Marsh/ }).click();
      await owner.getByRole('heading', { name: 'Bob Marsh' }).waitFor();
      t.pass('a mention opens the conversation with that person');
    });

    await t.test('scrolling up reads back through the whole history, a page at a time', async (t) => {
      const HISTORY = 350;
      await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'history' }] });
      const historyId: number = (await api.get('/get_stream_id', { stream: 'history' })).body.stream_id;
      const refused: number[] = [];
      for (let i = 1; i <= HISTORY; i += 10) {
        await Promise.all(Array.from({ length: 10 }, (_, j) => i + j).map(async (n) => {
          const sent = await api.post('/messages', { type: 'stream', to: String(historyId), topic: 'archive', content: `history ${n}` });
          if (sent.status !== 200) refused.push(n);
        }));
      }
      t.same(refused, [], 'all sent');
      // Sent ten at a time, so the ids are not in the numbers' order: the page must follow the ids.
      const ids: number[] = (await api.get('/messages', { narrow: [{ operator: 'channel', operand: historyId }], anchor: 'oldest', num_before: 0, num_after: HISTORY })).body.messages.map((m: { id: number }) => m.id);
      t.equal(ids.length, HISTORY);
      await owner.getByRole('button', { name: /^Channel history/ }).click();
      const messages = owner.locator('.msg');
      const feed = owner.getByRole('log', { name: 'Messages' });
      const loaded = async () => Number(await feed.getAttribute('data-loaded'));
      await owner.locator(`.msg[data-id="${ids.at(-1)}"]`).waitFor();
      t.equal(await loaded(), 100, 'the newest page first');
      const seen = new Set<number>();
      const drawn = async () => {
        const drawnIds = await messages.evaluateAll((nodes) => nodes.map((node) => Number((node as HTMLElement).dataset.id)));
        for (const id of drawnIds) seen.add(id);
        return drawnIds;
      };
      // On screen, not merely in the page: the feed's box holds part of it.
      const onScreen = (id: number) => owner.evaluate((id) => {
        const node = document.querySelector(`.msg[data-id="${id}"]`);
        if (!node) return false;
        const box = node.getBoundingClientRect();
        const view = document.querySelector('.feed')!.getBoundingClientRect();
        return box.bottom > view.top && box.top < view.bottom;
      }, id);
      // The reader drags the scroll bar to the top: the earlier page is fetched and goes in above.
      await feed.evaluate((node) => (node.scrollTop = 0));
      await owner.waitForFunction(() => Number(document.querySelector<HTMLElement>('.feed')!.dataset.loaded) >= 200);
      await owner.waitForFunction(() => !document.querySelector('.feed .feed-note[role="status"]'));
      t.ok(await onScreen(ids[HISTORY - 100]!), 'what the reader was reading stays in view');
      for (let i = 0; i < 50 && !(await onScreen(ids[0]!)); i++) {
        await drawn();
        await feed.evaluate((node) => (node.scrollTop = 0));
        await owner.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      }
      t.ok(await onScreen(ids[0]!), 'scrolled to the first message');
      t.ok(await owner.getByText('This is the beginning of the conversation.').isVisible(), 'under the start of the conversation');
      t.equal(await loaded(), HISTORY, 'every message loaded');
      const atTop = await drawn();
      t.same(atTop, ids.slice(0, atTop.length), 'the drawn messages are the first ones, once each, in order');
      t.ok(atTop.length < HISTORY / 2, `only a window of them is in the page (${atTop.length})`);
    });

    await t.test('the search box takes the server\'s narrow syntax', async (t) => {
      await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'random' }], principals: [bob.email] });
      const bobApi = api.as(bob);
      const randomId: number = (await api.get('/get_stream_id', { stream: 'random' })).body.stream_id;
      const ids = {
        lunch: (await bobApi.post('/messages', { type: 'stream', to: String(randomId), topic: 'lunch', content: 'Pizza at noon?' })).body.id,
        menu: (await bobApi.post('/messages', { type: 'stream', to: String(randomId), topic: 'lunch', content: 'The menu: https://example.com/menu' })).body.id,
        mine: (await api.post('/messages', { type: 'stream', to: String(generalId), topic: 'greetings', content: 'pizza is overrated' })).body.id,
        direct: (await bobApi.post('/messages', { type: 'direct', to: JSON.stringify([server.owner.email]), content: 'More pizza for us, then' })).body.id,
      };
      const box = owner.getByRole('searchbox', { name: 'Search messages' });
      const results = async (query: string) => {
        await box.fill(query);
        await box.press('Enter');
        await owner.locator('.pane-subtitle').filter({ hasText: query }).waitFor();
        const done = owner.locator('.feed-note, .feed-empty').filter({ hasText: /No earlier messages match|No messages match/ });
        await done.or(owner.locator('.feed [role="alert"]')).waitFor();
        t.ok(await done.isVisible(), `"${query}" answered ${(await owner.locator('.feed [role="alert"]').allTextContents()).join('')}`);
        return owner.locator('.msg').evaluateAll((nodes) => nodes.map((node) => Number((node as HTMLElement).dataset.id)));
      };
      t.same(await results('pizza'), [ids.lunch, ids.mine, ids.direct], 'words: every conversation');
      await owner.getByRole('heading', { name: 'Search results' }).waitFor();
      t.ok(await owner.getByRole('form', { name: 'Compose a message' }).isHidden(), 'no compose box under search results');
      t.ok(await owner.getByRole('button', { name: 'Open #random › lunch' }).isVisible(), 'each result says where it is');
      t.ok(await owner.getByRole('button', { name: 'Open Direct messages with Bob Marsh' }).isVisible());
      mkdirSync(OUTPUT, { recursive: true });
      await owner.mouse.move(0, 0);
      await owner.screenshot({ path: join(OUTPUT, 'search-results.png') });
      t.same(await results('from:bob@example.com pizza'), [ids.lunch, ids.direct], 'from:');
      t.same(await results('channel:general pizza'), [ids.mine], 'channel:');
      t.same(await results('topic:lunch'), [ids.lunch, ids.menu], 'topic:');
      t.same(await results('channel:random topic:lunch has:link'), [ids.menu], 'has:');
      t.same(await results('-from:bob@example.com pizza'), [ids.mine], 'negated');
      t.same(await results('nothing-like-this'), [], 'no match');
      await results('topic:lunch');
      await owner.getByRole('button', { name: 'Open #random › lunch' }).click();
      await owner.getByRole('heading', { name: '#random › lunch' }).waitFor();
      t.ok(await owner.getByRole('textbox', { name: 'Message' }).isVisible(), 'a result opens its conversation, ready to reply');
      t.equal(await box.inputValue(), '', 'the search box is cleared');
    });

    await t.test('screenshots of the main view, light and dark', async (t) => {
      mkdirSync(OUTPUT, { recursive: true });
      await owner.getByRole('button', { name: /^Channel general/ }).click();
      await owner.getByRole('button', { name: /^Topic greetings/ }).click();
      await owner.locator('.msg').filter({ hasText: 'After the new queue' }).waitFor();
      await owner.mouse.move(0, 0);
      await owner.screenshot({ path: join(OUTPUT, 'main-view.png') });
      // The colour scheme button cycles automatic → dark and saves it; the settings event applies it.
      await owner.getByRole('button', { name: /^Colour scheme: automatic/ }).click();
      await owner.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
      await owner.screenshot({ path: join(OUTPUT, 'main-view-dark.png') });
      t.ok(existsSync(join(OUTPUT, 'main-view.png')), `saved ${join(OUTPUT, 'main-view.png')}`);
      t.same(errors, [], 'no script errors in either page');
    });
  });
}

import { chromium, type Locator, type Page } from 'playwright-core';
import t from 'tap';
import { png } from './helpers/images.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';
import { CHROMIUM, chromiumMissing, LAUNCH_ARGS, screenshot, seriousAccessibilityViolations, signIn, uploadEmoji } from './helpers/web.ts';

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

/** Whether the element is within the scrolled feed's view (Playwright's isVisible ignores scrolling). */
const inView = (locator: Locator) => locator.evaluate((node) => {
  const box = node.getBoundingClientRect();
  const view = node.closest('.feed')!.getBoundingClientRect();
  return box.bottom > view.top && box.top < view.bottom;
});

/** Whether the element is absent (outside the drawn window of a long conversation) or scrolled out of view. */
const outOfView = async (locator: Locator) => (await locator.count()) === 0 || !(await inView(locator));

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
    // The owner copies message links to the clipboard.
    const ownerContext = await browser.newContext({ viewport: { width: 1366, height: 820 }, colorScheme: 'light', permissions: ['clipboard-read', 'clipboard-write'] });
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

    await t.test('uploads: the button with progress, a dropped file and a pasted image, each linked in the compose box', async (t) => {
      await owner.getByRole('button', { name: /^Channel design/ }).click();
      await owner.getByRole('heading', { name: '#design' }).waitFor();
      await owner.getByLabel('Topic', { exact: true }).fill('files');
      const text = owner.getByRole('textbox', { name: 'Message' });
      await text.fill('Here: ');
      // The upload is held at the network until the progress has been seen.
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      await owner.route('**/api/v1/user_uploads', async (route) => {
        await held;
        await route.continue();
      });
      const chooser = owner.waitForEvent('filechooser');
      await owner.getByRole('button', { name: 'Attach files' }).click();
      await (await chooser).setFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('remember the milk\n'.repeat(2000)) });
      await owner.getByRole('progressbar', { name: 'Uploading notes.txt' }).waitFor();
      t.equal(await text.inputValue(), 'Here: [Uploading notes.txt…]() ', 'a placeholder while it uploads');
      release();
      await owner.waitForFunction(() => /^Here: \[notes\.txt\]\(\/user_uploads\/\S+\/notes\.txt\) $/.test(document.querySelector<HTMLTextAreaElement>('textarea.compose-text')!.value));
      await owner.unroute('**/api/v1/user_uploads');
      t.ok(await owner.getByRole('progressbar').count() === 0, 'the progress bar is gone');

      // A file dragged from the desktop onto the conversation.
      const dropped = await owner.evaluateHandle((bytes) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(bytes)], 'dropped.png', { type: 'image/png' }));
        return transfer;
      }, [...png([30, 30, 220, 255])]);
      await owner.locator('.feed').dispatchEvent('dragenter', { dataTransfer: dropped });
      await owner.locator('.feed').dispatchEvent('dragover', { dataTransfer: dropped });
      t.ok(await owner.locator('.pane.dropping').count(), 'the drop target is shown');
      await owner.locator('.feed').dispatchEvent('drop', { dataTransfer: dropped });
      await owner.waitForFunction(() => /\[dropped\.png\]\(\/user_uploads\/\S+\/dropped\.png\) $/.test(document.querySelector<HTMLTextAreaElement>('textarea.compose-text')!.value));

      // An image pasted from the clipboard.
      await text.focus();
      await text.evaluate((area, bytes) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(bytes)], 'pasted.png', { type: 'image/png' }));
        area.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }));
      }, [...png([30, 200, 30, 255])]);
      await owner.waitForFunction(() => /\[pasted\.png\]\(\/user_uploads\/\S+\/pasted\.png\) $/.test(document.querySelector<HTMLTextAreaElement>('textarea.compose-text')!.value));
      await text.press('Control+Enter');

      const message = bobPage.locator('.msg').filter({ hasText: 'notes.txt' });
      await bobPage.getByRole('button', { name: /^Channel design/ }).click();
      await message.waitFor();
      t.equal(await message.getByRole('link', { name: 'notes.txt' }).count(), 1, 'Bob gets the link to the text file');
      await bobPage.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('.msg .message_inline_image img')].filter((image) => image.complete && image.naturalWidth === 1).length === 2);
      t.same(await message.locator('.message_inline_image img').evaluateAll((images) => images.map((image) => image.getAttribute('alt'))), ['dropped.png', 'pasted.png'], 'and previews of both images');
      const attachments = (await api.get('/attachments')).body.attachments as { name: string }[];
      t.same(attachments.map((a) => a.name).sort(), ['dropped.png', 'notes.txt', 'pasted.png'], 'three files on the server, owned by the sender');
    });

    await t.test('the emoji picker: search by name, custom emoji too, in the compose box and as reactions', async (t) => {
      await uploadEmoji(api, 'party_parrot');
      const text = owner.getByRole('textbox', { name: 'Message' });
      await text.fill('Launch');
      await owner.getByRole('button', { name: 'Add emoji' }).click();
      const picker = owner.getByRole('dialog', { name: 'Choose an emoji' });
      await picker.getByRole('searchbox', { name: 'Search emoji' }).fill('rock');
      await picker.getByRole('option', { name: 'rocket' }).click();
      t.equal(await text.inputValue(), 'Launch :rocket: ', 'the name goes in at the caret');
      t.ok(await picker.isHidden(), 'the picker closes');
      await text.press('Control+Enter');
      const launch = bobPage.locator('.msg').filter({ hasText: 'Launch' });
      await launch.getByRole('img', { name: 'rocket' }).waitFor();

      await launch.hover();
      await launch.getByRole('button', { name: 'Add reaction' }).click();
      const bobPicker = bobPage.getByRole('dialog', { name: 'Choose an emoji' });
      await bobPicker.getByRole('searchbox', { name: 'Search emoji' }).fill('parrot');
      await bobPicker.getByRole('option', { name: 'party parrot' }).click();
      await launch.hover();
      await launch.getByRole('button', { name: 'Add reaction' }).click();
      await bobPicker.getByRole('searchbox', { name: 'Search emoji' }).fill('tada');
      await bobPicker.getByRole('searchbox', { name: 'Search emoji' }).press('Enter');
      const ownersView = owner.locator('.msg').filter({ hasText: 'Launch' });
      await ownersView.getByRole('button', { name: /^party_parrot: 1, by Bob Marsh/ }).locator('img.emoji').waitFor();
      t.equal(await ownersView.getByRole('button', { name: /^tada: 1, by Bob Marsh/ }).locator('.reaction-emoji').textContent(), '🎉', 'a Unicode reaction by name');
      t.pass('a custom emoji reaction, drawn as its image');
      await owner.getByRole('button', { name: 'Add emoji' }).click();
      await owner.getByRole('dialog', { name: 'Choose an emoji' }).getByRole('option', { name: 'party parrot' }).waitFor();
      await screenshot(owner, 'emoji-picker.png');
      await owner.keyboard.press('Escape');
      t.ok(await owner.getByRole('dialog', { name: 'Choose an emoji' }).isHidden(), 'Escape closes it');
    });

    await t.test('@ mentions, # channels and : emoji complete as one types', async (t) => {
      const text = owner.getByRole('textbox', { name: 'Message' });
      await text.fill('');
      await text.pressSequentially('Hi @bo', { delay: 10 });
      const list = owner.getByRole('listbox', { name: 'Suggestions' });
      await list.getByRole('option', { name: /Bob Marsh/ }).waitFor();
      t.equal(await text.getAttribute('aria-activedescendant'), 'compose-suggestion-0', 'the first suggestion is the active one');
      await text.press('Enter');
      t.equal(await text.inputValue(), 'Hi @**Bob Marsh** ', 'Enter takes the suggestion rather than sending');
      await text.pressSequentially('see #gen', { delay: 10 });
      await list.getByRole('option', { name: '#general' }).waitFor();
      await text.press('Tab');
      await text.pressSequentially('now :tad', { delay: 10 });
      await list.getByRole('option', { name: /:tada:/ }).click();
      t.equal(await text.inputValue(), 'Hi @**Bob Marsh** see #**general** now :tada: ');
      await text.pressSequentially('@nobody-like-this', { delay: 5 });
      t.ok(await list.isHidden(), 'no list without matches');
      await text.press('Control+Enter');
      const seen = bobPage.locator('.msg').filter({ hasText: 'see #general' });
      await seen.waitFor();
      t.equal(await seen.locator('.user-mention').textContent(), '@Bob Marsh', 'a real mention');
      t.equal(await seen.getByRole('link', { name: '#general' }).count(), 1, 'and a channel link');
    });

    const bobApi = api.as(bob);
    const backlog: number[] = [];

    await t.test('the inbox lists unread conversations, live, with counts per topic', async (t) => {
      await owner.getByRole('button', { name: /^Inbox/ }).click();
      await owner.getByRole('heading', { name: 'Inbox' }).waitFor();
      for (let i = 1; i <= 60; i += 10) {
        backlog.push(...await Promise.all(Array.from({ length: 10 }, (_, j) => bobApi.post('/messages', { type: 'stream', to: String(generalId), topic: 'backlog', content: `backlog ${i + j}` }).then((sent) => sent.body.id as number))));
      }
      backlog.sort((a, b) => a - b);
      for (const n of [1, 2]) await bobApi.post('/messages', { type: 'stream', to: String(generalId), topic: 'other', content: `other ${n}` });
      await bobApi.post('/messages', { type: 'direct', to: JSON.stringify([server.owner.email]), content: 'A word in private' });
      await owner.getByRole('button', { name: 'Open #general › backlog, 60 unread' }).waitFor();
      await owner.getByRole('button', { name: 'Open #general › other, 2 unread' }).waitFor();
      await owner.getByRole('button', { name: 'Open Bob Marsh, 1 unread' }).waitFor();
      t.match(await owner.getByRole('button', { name: /^Inbox, \d+ unread$/ }).getAttribute('aria-label'), /^Inbox, (6[3-9]|[7-9]\d) unread$/, 'the sidebar counts every unread message');
      await screenshot(owner, 'inbox.png');
    });

    await t.test('a conversation opens at its first unread message, and messages are read as they scroll into view', async (t) => {
      await owner.getByRole('button', { name: 'Open #general › backlog, 60 unread' }).click();
      await owner.getByRole('heading', { name: '#general › backlog' }).waitFor();
      const first = owner.locator(`.msg[data-id="${backlog[0]}"]`);
      await first.waitFor();
      t.ok(await inView(first), 'the first unread message is in view');
      t.ok(await outOfView(owner.locator(`.msg[data-id="${backlog.at(-1)}"]`)), 'the latest is not yet: nobody has read it');
      const topic = owner.getByRole('button', { name: /^Topic backlog/ });
      await owner.waitForFunction(() => /^Topic backlog, \d+ unread$/.test(document.querySelector('[data-key^="topic:"][aria-current="page"]')?.getAttribute('aria-label') ?? ''));
      const partly = Number(/(\d+) unread/.exec((await topic.getAttribute('aria-label'))!)![1]);
      t.ok(partly > 0 && partly < 60, `what was on screen is read, the rest not (${partly} left)`);
      t.ok(await owner.getByRole('button', { name: 'Topic other, 2 unread' }).isVisible(), 'another topic keeps its own count');
      const feed = owner.getByRole('log', { name: 'Messages' });
      await feed.hover();
      // Down to the end of the conversation, as a reader does.
      const atEnd = () => feed.evaluate((node) => node.scrollTop + node.clientHeight >= node.scrollHeight - 2);
      for (let i = 0; i < 60 && !(await atEnd()); i++) await owner.mouse.wheel(0, 400);
      await owner.getByRole('button', { name: 'Topic backlog', exact: true }).waitFor();
      t.pass('scrolled to the end: all read');
      // The flags request follows the sidebar's update; it is waited for, not raced.
      const unreadLeft = async () => (await api.get('/messages', { narrow: [{ operator: 'is', operand: 'unread' }, { operator: 'topic', operand: 'backlog' }], anchor: 'newest', num_before: 100, num_after: 0 })).body.messages.length;
      let left = await unreadLeft();
      for (let i = 0; i < 50 && left > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        left = await unreadLeft();
      }
      t.equal(left, 0, 'and the server knows it');
    });

    await t.test('recent conversations: latest first, live, each opening its conversation', async (t) => {
      await owner.getByRole('button', { name: 'Recent conversations' }).click();
      await owner.getByRole('heading', { name: 'Recent conversations' }).waitFor();
      const rows = owner.locator('.recent-list .overview-row');
      await rows.first().waitFor();
      t.equal(await rows.first().getAttribute('aria-label'), 'Open Bob Marsh, 1 unread', 'the latest conversation first');
      t.ok(await owner.getByRole('button', { name: 'Open #general › other, 2 unread' }).isVisible());
      t.ok(await owner.getByRole('button', { name: 'Open #general › backlog' }).isVisible());
      await bobApi.post('/messages', { type: 'stream', to: 'design', topic: 'fresh', content: 'Something new' });
      await owner.getByRole('button', { name: 'Open #design › fresh, 1 unread' }).waitFor();
      t.equal(await rows.first().getAttribute('aria-label'), 'Open #design › fresh, 1 unread', 'a new conversation goes on top as it arrives');
      await screenshot(owner, 'recent-conversations.png');
      await rows.first().click();
      await owner.getByRole('heading', { name: '#design › fresh' }).waitFor();
      await owner.locator('.msg').filter({ hasText: 'Something new' }).waitFor();
      t.pass('opened');
    });

    await t.test('starring a message puts it in the starred view; unstarring takes it out', async (t) => {
      const message = owner.locator('.msg').filter({ hasText: 'Something new' });
      await message.hover();
      await message.getByRole('button', { name: 'Star message' }).click();
      await message.getByRole('img', { name: 'Starred' }).waitFor();
      await owner.getByRole('button', { name: 'Starred messages' }).click();
      await owner.getByRole('heading', { name: 'Starred messages' }).waitFor();
      const starred = owner.locator('.msg').filter({ hasText: 'Something new' });
      await starred.waitFor();
      t.ok(await owner.getByRole('button', { name: 'Open #design › fresh' }).isVisible(), 'headed by its conversation');
      t.ok(await owner.getByRole('form', { name: 'Compose a message' }).isHidden(), 'no compose box');
      await starred.hover();
      await starred.getByRole('button', { name: 'Unstar message' }).click();
      await owner.getByText('No starred messages. Star a message to find it here.').waitFor();
      t.pass('gone once unstarred');
    });

    await t.test('a message link opens the conversation at that message, for another person too', async (t) => {
      await owner.getByRole('button', { name: /^Channel general/ }).click();
      await owner.getByRole('button', { name: /^Topic backlog/ }).click();
      const fifth = owner.locator(`.msg[data-id="${backlog[4]}"]`);
      await fifth.scrollIntoViewIfNeeded();
      await fifth.hover();
      await fifth.getByRole('button', { name: 'Copy link to message' }).click();
      await owner.waitForFunction(() => navigator.clipboard.readText().then((text) => text.includes('/near/')));
      const link = await owner.evaluate(() => navigator.clipboard.readText());
      t.match(link, new RegExp(`^${server.url}/#narrow/channel/${generalId}-general/topic/backlog/near/${backlog[4]}$`), "the original's link form");

      await bobPage.goto(link);
      const target = bobPage.locator(`.msg[data-id="${backlog[4]}"]`);
      await bobPage.getByRole('heading', { name: '#general › backlog' }).waitFor();
      await target.waitFor();
      t.ok(await inView(target), 'the message is in view');
      t.equal(await target.getAttribute('aria-current'), 'true', 'and marked');
      t.ok(await outOfView(bobPage.locator(`.msg[data-id="${backlog.at(-1)}"]`)), 'rather than the latest');

      // The same link sent in a message, clicked in the other's client.
      await api.post('/messages', { type: 'stream', to: 'design', topic: 'links', content: `See ${link}` });
      await bobPage.getByRole('button', { name: /^Channel design/ }).click();
      await bobPage.getByRole('link', { name: link }).click();
      await bobPage.getByRole('heading', { name: '#general › backlog' }).waitFor();
      await bobPage.locator(`.msg.target[data-id="${backlog[4]}"]`).waitFor();
      t.pass('a link in a message opens there too');
    });

    await t.test('a topic resolved, then moved to another channel: the other person\'s view follows it', async (t) => {
      await owner.getByRole('button', { name: /^Channel general/ }).click();
      await owner.getByRole('button', { name: /^Topic backlog/ }).click();
      await owner.getByRole('heading', { name: '#general › backlog' }).waitFor();
      await bobPage.getByRole('heading', { name: '#general › backlog' }).waitFor();
      await owner.getByRole('group', { name: 'Topic actions' }).getByRole('button', { name: 'Mark as resolved' }).click();
      await owner.getByRole('heading', { name: '#general › ✔ backlog' }).waitFor();
      await bobPage.getByRole('heading', { name: '#general › ✔ backlog' }).waitFor();
      t.ok(await owner.getByRole('button', { name: 'Mark as unresolved' }).isVisible(), 'resolved, for both');

      await owner.getByRole('button', { name: 'Move topic' }).click();
      const dialog = owner.getByRole('dialog', { name: 'Move “✔ backlog”' });
      await dialog.getByRole('textbox', { name: 'New topic name' }).fill('archive');
      await dialog.getByRole('combobox', { name: 'Channel' }).selectOption({ label: '#design' });
      await dialog.getByRole('button', { name: 'Move' }).click();
      await owner.getByRole('heading', { name: '#design › archive' }).waitFor();
      await bobPage.getByRole('heading', { name: '#design › archive' }).waitFor();
      await bobPage.locator(`.msg[data-id="${backlog[0]}"]`).waitFor();
      const moved = await api.get('/messages', { narrow: [{ operator: 'channel', operand: 'design' }, { operator: 'topic', operand: 'archive' }], anchor: 'newest', num_before: 100, num_after: 0 });
      const movedIds = new Set((moved.body.messages as { id: number }[]).map((message) => message.id));
      t.ok(backlog.every((id) => movedIds.has(id)), 'every message of the topic moved (with the notice of its resolving)');
      const left = await api.get('/messages', { narrow: [{ operator: 'channel', operand: 'general' }, { operator: 'topic', operand: '✔ backlog' }], anchor: 'newest', num_before: 100, num_after: 0 });
      t.equal(left.body.messages.length, 0, 'none left behind');
    });

    await t.test('an edited message shows its edit history', async (t) => {
      const sent = (await api.post('/messages', { type: 'stream', to: 'design', topic: 'notes', content: 'First *draft*' })).body.id;
      await owner.getByRole('button', { name: /^Channel design/ }).click();
      const mine = owner.locator(`.msg[data-id="${sent}"]`);
      await mine.hover();
      await mine.getByRole('button', { name: 'Edit message' }).click();
      await owner.getByRole('textbox', { name: 'Edit message' }).fill('The final text');
      await owner.getByRole('button', { name: 'Save edit' }).click();
      await bobPage.getByRole('button', { name: /^Channel design/ }).click();
      const seen = bobPage.locator(`.msg[data-id="${sent}"]`);
      await seen.getByRole('button', { name: 'Show edit history' }).click();
      const dialog = bobPage.getByRole('dialog', { name: 'Edit history' });
      await dialog.getByText('The final text').waitFor();
      t.equal(await dialog.locator('.history-version em').textContent(), 'draft', 'the first version, rendered');
      t.match(await dialog.locator('.history-meta').allTextContents(), [/^Sent by Owner/, /^Edited by Owner/]);
      await screenshot(bobPage, 'edit-history.png');
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });
    });

    await t.test("a person's card: role, status, local time and presence, and a way to write to them", async (t) => {
      t.equal((await api.post('/users/me/status', { status_text: 'In a meeting', emoji_name: 'calendar', emoji_code: '1f4c6', reaction_type: 'unicode_emoji' })).status, 200);
      t.equal((await api.patch('/settings', { timezone: 'Europe/Paris' })).status, 200);
      const message = bobPage.locator('.msg').filter({ hasText: 'The final text' });
      await message.getByRole('button', { name: 'Owner', exact: true }).click();
      const card = bobPage.getByRole('dialog', { name: 'Owner' });
      await card.getByText('In a meeting').waitFor();
      const facts = await card.locator('dl').textContent();
      t.match(facts, /RoleOwner/, 'the role');
      t.match(facts, new RegExp(`Email${server.owner.email}`), 'the email');
      t.match(facts, /Local time\d{1,2}:\d{2}.*\(Europe\/Paris\)/, 'their local time, from their time zone');
      t.match(facts, /PresenceActive now/, "present: the owner's page reports it");
      t.equal(await card.locator('.user-card-status').textContent(), '📆 In a meeting', 'the status with its emoji');
      await screenshot(bobPage, 'user-card.png');
      await card.getByRole('button', { name: 'Send a direct message' }).click();
      await bobPage.getByRole('heading', { name: 'Owner', exact: true }).waitFor();
      t.equal(await bobPage.locator('.nav-row .presence-dot.active').count(), 2, 'green dots in the sidebar: Bob himself and the owner');
    });

    await t.test('desktop notifications for direct messages and mentions, as the settings say', async (t) => {
      await bobContext.grantPermissions(['notifications'], { origin: server.url });
      // Each notification the page creates is recorded on its way to the browser's own.
      await bobPage.addInitScript(() => {
        const Real = window.Notification;
        const shown: { title: string; body: string }[] = [];
        (window as unknown as { shown: typeof shown }).shown = shown;
        window.Notification = class extends Real {
          constructor(title: string, options?: NotificationOptions) {
            super(title, options);
            shown.push({ title, body: options?.body ?? '' });
          }
        } as typeof Notification;
      });
      const reloaded = Date.now();
      await bobPage.reload();
      await bobPage.getByRole('button', { name: /^Channel design/ }).waitFor();
      // Measured, not asserted (speed targets live in bench/): page, bundle, registration and sidebar drawn.
      t.comment(`the page was ready ${Date.now() - reloaded} ms after a reload`);
      await bobPage.getByRole('button', { name: /^Channel design/ }).click();
      await bobPage.getByRole('heading', { name: '#design' }).waitFor();
      t.ok(await bobPage.getByRole('button', { name: 'Turn on desktop notifications' }).isHidden(), 'nothing to ask: the permission is granted');
      const shown = () => bobPage.evaluate(() => (window as unknown as { shown: { title: string; body: string }[] }).shown);
      await api.post('/messages', { type: 'stream', to: 'general', topic: 'chatter', content: 'Nothing for Bob in particular' });
      await api.post('/messages', { type: 'direct', to: JSON.stringify([bob.email]), content: 'Are you free at **three**?' });
      await bobPage.waitForFunction(() => (window as unknown as { shown: unknown[] }).shown.length >= 1);
      await api.post('/messages', { type: 'stream', to: 'general', topic: 'chatter', content: '@**Bob Marsh** please review' });
      await bobPage.waitForFunction(() => (window as unknown as { shown: unknown[] }).shown.length >= 2);
      t.same(await shown(), [
        { title: 'Owner', body: 'Are you free at three?' },
        { title: 'Owner mentioned you in #general › chatter', body: '@Bob Marsh please review' },
      ], 'a direct message and a mention, not the plain channel message');
      t.equal((await bobApi.patch('/settings', { enable_desktop_notifications: false })).status, 200);
      await api.post('/messages', { type: 'direct', to: JSON.stringify([bob.email]), content: 'And now?' });
      await bobPage.getByRole('button', { name: /^Direct messages with Owner, \d+ unread/ }).waitFor();
      const marker = (await api.post('/messages', { type: 'stream', to: 'design', topic: 'fresh', content: 'marker' })).body.id;
      await bobPage.locator(`.msg[data-id="${marker}"]`).waitFor();
      t.equal((await shown()).length, 2, 'none once the user turned them off');
    });

    await t.test('a new group conversation, and the keyboard shortcuts', async (t) => {
      const cat = await api.createUser('cat@example.com', 'Cat Lee', 'a-Strong-passw0rd-for-cat');
      await bobPage.getByRole('button', { name: 'New direct or group conversation' }).click();
      const dialog = bobPage.getByRole('dialog', { name: 'New conversation' });
      await dialog.getByRole('searchbox', { name: 'Find people' }).fill('lee');
      t.equal(await dialog.locator('.person-choice:visible').count(), 1, 'the list narrows as one types');
      await dialog.getByRole('checkbox', { name: /Cat Lee/ }).check();
      await dialog.getByRole('searchbox', { name: 'Find people' }).fill('');
      await dialog.getByRole('checkbox', { name: /Owner/ }).check();
      await dialog.getByRole('button', { name: 'Open conversation' }).click();
      await bobPage.getByRole('heading', { name: 'Owner, Cat Lee' }).waitFor();
      const text = bobPage.getByRole('textbox', { name: 'Message' });
      await text.fill('Hello both of you');
      await text.press('Control+Enter');
      await owner.getByRole('button', { name: /^Direct messages with Bob Marsh, Cat Lee, 1 unread/ }).waitFor();
      const answer = await api.as(cat).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 });
      const group = answer.body.messages as { content: string; display_recipient: { email: string }[] }[];
      t.equal(group.at(-1)?.content, '<p>Hello both of you</p>', 'Cat got it');
      t.same(group.at(-1)?.display_recipient.map((person) => person.email).sort(), [bob.email, 'cat@example.com', server.owner.email].sort(), 'a group conversation of three');

      // Shortcuts act where no text field has the focus.
      await owner.getByRole('heading').first().click();
      await owner.keyboard.press('Shift+I');
      await owner.getByRole('heading', { name: 'Inbox' }).waitFor();
      await owner.keyboard.press('t');
      await owner.getByRole('heading', { name: 'Recent conversations' }).waitFor();
      // p: the direct conversations with unread messages, the longest waiting first.
      await owner.keyboard.press('p');
      await owner.getByRole('heading', { name: 'Bob Marsh', exact: true }).waitFor();
      await owner.getByRole('heading').first().click();
      await owner.keyboard.press('p');
      await owner.getByRole('heading', { name: 'Bob Marsh, Cat Lee' }).waitFor();
      await owner.getByRole('heading').first().click();
      await owner.keyboard.press('/');
      t.ok(await owner.getByRole('searchbox', { name: 'Search messages' }).evaluate((node) => node === document.activeElement), '/ focuses the search box');
      await owner.getByRole('heading').first().click();
      await owner.keyboard.press('?');
      await owner.getByRole('dialog', { name: 'Keyboard shortcuts' }).getByText('Next unread topic').waitFor();
      await owner.keyboard.press('Escape');
      await owner.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor({ state: 'detached' });
      await owner.getByRole('heading').first().click();
      await owner.keyboard.press('c');
      await owner.getByLabel('Topic', { exact: true }).waitFor();
      t.ok(await owner.getByLabel('Topic', { exact: true }).evaluate((node) => node === document.activeElement), 'c starts a new topic');
    });

    await t.test('screenshots of the main views: light and dark, wide and 375 px narrow', async (t) => {
      const views = [
        { name: 'conversation', open: async () => {
          await owner.getByRole('button', { name: /^Channel general/ }).click();
          await owner.getByRole('heading', { name: '#general' }).waitFor();
          await owner.locator('.msg').first().waitFor();
        } },
        { name: 'inbox', open: async () => {
          await owner.getByRole('button', { name: /^Inbox/ }).click();
          await owner.getByRole('heading', { name: 'Inbox' }).waitFor();
        } },
        { name: 'recent', open: async () => {
          await owner.getByRole('button', { name: 'Recent conversations' }).click();
          await owner.locator('.recent-list').waitFor();
        } },
      ];
      const written: string[] = [];
      for (const [scheme, value] of [['light', 3], ['dark', 2]] as const) {
        await api.patch('/settings', { color_scheme: value });
        await owner.waitForFunction((wanted) => document.documentElement.dataset.theme === wanted, scheme);
        for (const [size, viewport] of [['wide', { width: 1366, height: 820 }], ['narrow', { width: 375, height: 760 }]] as const) {
          await owner.setViewportSize(viewport);
          for (const view of views) {
            await view.open();
            written.push(await screenshot(owner, `${view.name}-${scheme}-${size}.png`));
          }
        }
      }
      await owner.setViewportSize({ width: 1366, height: 820 });
      t.equal(written.length, 12, 'three views, two schemes, two widths');
      const overflow = await owner.evaluate(() => document.documentElement.scrollWidth > innerWidth);
      t.notOk(overflow, 'no sideways scrolling');
    });

    await t.test('an axe-core scan of each main view finds no serious or critical violations', async (t) => {
      const scan = async (page: Page, what: string) => {
        t.same(await seriousAccessibilityViolations(page), [], `${what}: no serious violations`);
      };
      for (const [scheme, value] of [['light', 3], ['dark', 2]] as const) {
        await api.patch('/settings', { color_scheme: value });
        await owner.waitForFunction((wanted) => document.documentElement.dataset.theme === wanted, scheme);
        await owner.getByRole('button', { name: /^Channel general/ }).click();
        await owner.getByRole('button', { name: /^Topic formulas/ }).click();
        await owner.locator('.katex-html').first().waitFor();
        await scan(owner, `a conversation with math and code (${scheme})`);
        await owner.getByRole('button', { name: /^Channel design/ }).click();
        // The long conversation moved here since is drawn a window at a time: up to where the reactions are.
        const launch = owner.locator('.msg').filter({ hasText: 'Launch' });
        await owner.getByRole('heading', { name: '#design' }).waitFor();
        await owner.locator('.feed .msg').first().waitFor();
        await owner.getByRole('log', { name: 'Messages' }).hover();
        for (let i = 0; i < 100 && !(await launch.count()); i++) await owner.mouse.wheel(0, -1500);
        await launch.locator('.reaction').first().waitFor();
        await scan(owner, `a conversation with reactions and images (${scheme})`);
        await owner.getByRole('button', { name: 'Add emoji' }).click();
        await owner.getByRole('dialog', { name: 'Choose an emoji' }).getByRole('option').first().waitFor();
        await scan(owner, `the emoji picker (${scheme})`);
        await owner.keyboard.press('Escape');
        const text = owner.getByRole('textbox', { name: 'Message' });
        await text.fill('');
        await text.pressSequentially('@bo', { delay: 5 });
        await owner.getByRole('listbox', { name: 'Suggestions' }).waitFor();
        await scan(owner, `mention suggestions (${scheme})`);
        await text.fill('');
        await owner.getByRole('button', { name: /^Inbox/ }).click();
        await owner.getByRole('heading', { name: 'Inbox' }).waitFor();
        await scan(owner, `the inbox (${scheme})`);
        await owner.getByRole('button', { name: 'Recent conversations' }).click();
        await owner.locator('.recent-list').waitFor();
        await scan(owner, `recent conversations (${scheme})`);
      }
    });

    await t.test('a message sent while its channel loads stays in view when the answer made before it comes', async (t) => {
      // The server answers the channel's fetch before the send, and the answer reaches the page only once the
      // message's event has shown it: the order a loaded machine gave the first subtest now and then.
      await owner.getByRole('button', { name: /^Channel design/ }).click();
      await owner.getByRole('heading', { name: '#design' }).waitFor();
      const isFetch = (url: URL) => url.pathname === '/api/v1/messages' && url.searchParams.has('narrow');
      let fetched!: () => void;
      const answered = new Promise<void>((resolve) => { fetched = resolve; });
      let release!: () => void;
      const released = new Promise<void>((resolve) => { release = resolve; });
      await owner.route(isFetch, async (route) => {
        const response = await route.fetch();
        fetched();
        await released;
        await route.fulfill({ response });
      });
      await owner.getByRole('button', { name: /^Channel general/ }).click();
      await answered;
      await api.post('/messages', { type: 'stream', to: String(generalId), topic: 'race', content: 'Sent while the channel loads' });
      const late = owner.locator('.feed .msg').filter({ hasText: 'Sent while the channel loads' });
      await late.waitFor();
      release();
      // Before the answer the feed holds the one message; after it, the channel's earlier ones too.
      await owner.locator('.feed .msg').nth(1).waitFor();
      await owner.unroute(isFetch);
      t.equal(await late.count(), 1, 'the message is still shown, once');
    });

    await t.test('no script errors', async (t) => {
      t.same(errors, [], 'in either page');
    });
  });
}

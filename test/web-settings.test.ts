import { chromium } from 'playwright-core';
import t from 'tap';
import { png } from './helpers/images.ts';
import { startTestServer } from './helpers/server.ts';
import { CHROMIUM, chromiumMissing, LAUNCH_ARGS, screenshot, seriousAccessibilityViolations, signIn } from './helpers/web.ts';

// The web client's settings page, scheduled messages and saved snippets, and a conversation of 10,000
// messages (issue 19), in one Chromium as a person uses them.

const missing = chromiumMissing();
if (missing) {
  t.fail(missing);
} else {
  t.test('the web client: settings, scheduled send, snippets, a long conversation', async (t) => {
    const server = await startTestServer(t, { rateLimit: null });
    const { api } = server;
    t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }] })).status, 200);
    const generalId: number = (await api.get('/get_stream_id', { stream: 'general' })).body.stream_id;
    await api.post('/messages', { type: 'stream', to: String(generalId), topic: 'hello', content: 'First words' });

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
    t.teardown(() => browser.close());
    const context = await browser.newContext({ viewport: { width: 1366, height: 820 }, colorScheme: 'light', timezoneId: 'UTC' });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await signIn(page, server.url, server.owner.email, server.ownerPassword);
    await page.getByRole('heading', { name: '#general' }).waitFor();
    // The server has no GET /settings: a registration reads them.
    const settingsNow = async () => (await api.post('/register', { fetch_event_types: ['user_settings'], event_types: ['user_settings'] })).body.user_settings ?? {};

    /** A view in light and dark, wide and 375 px wide: NAME-light-wide.png and so on. */
    const shots = async (name: string) => {
      for (const scheme of [3, 2]) {
        await api.patch('/settings', { color_scheme: scheme });
        await page.waitForFunction((theme) => document.documentElement.dataset.theme === theme, scheme === 2 ? 'dark' : 'light');
        const label = scheme === 2 ? 'dark' : 'light';
        await screenshot(page, `${name}-${label}-wide.png`);
        await page.setViewportSize({ width: 375, height: 740 });
        await screenshot(page, `${name}-${label}-narrow.png`);
        await page.setViewportSize({ width: 1366, height: 820 });
      }
      await api.patch('/settings', { color_scheme: 3 });
      await page.waitForFunction(() => document.documentElement.dataset.theme === 'light');
    };

    await t.test('the settings page changes the personal settings, the name and the avatar', async (t) => {
      await page.getByRole('button', { name: 'Settings' }).click();
      const dialog = page.getByRole('dialog', { name: 'Settings' });
      await dialog.waitFor();
      await screenshot(page, 'settings-light-wide.png');
      t.same(await seriousAccessibilityViolations(page), [], 'axe-core: no serious violations on the settings page');
      // Each change is saved as it is made; the page says so.
      const status = dialog.getByRole('status');
      const saved = async () => {
        await page.waitForFunction(() => /^(Saved|Not saved)/.test(document.querySelector('.settings-status')?.textContent ?? ''));
        t.match(await status.textContent(), /^Saved/, 'saved');
        await status.evaluate((node) => (node.textContent = ''));
      };

      await dialog.getByLabel('Display name').fill('Olive Owner');
      await dialog.getByLabel('Display name').press('Tab');
      await saved();
      t.equal((await api.get(`/users/${server.owner.email}`)).body.user?.full_name, 'Olive Owner', 'the name is saved');
      await page.locator('.me-name').filter({ hasText: 'Olive Owner' }).waitFor();

      await dialog.getByLabel('Twenty-four-hour time').check();
      await saved();
      t.equal((await settingsNow()).twenty_four_hour_time, true, 'twenty-four-hour time is saved');
      await dialog.getByLabel(/^Enter sends/).check();
      await saved();
      t.equal((await settingsNow()).enter_sends, true, 'Enter sends is saved');
      await dialog.getByLabel(/^Desktop notifications for direct messages/).uncheck();
      await saved();
      t.equal((await settingsNow()).enable_desktop_notifications, false, 'desktop notifications are off');
      await dialog.getByLabel(/^Show the text of direct messages/).uncheck();
      await saved();
      t.equal((await settingsNow()).pm_content_in_desktop_notifications, false, 'and their text');
      await dialog.getByLabel('Time zone').selectOption('Asia/Tokyo');
      await saved();
      t.equal((await settingsNow()).timezone, 'Asia/Tokyo', 'the time zone is saved');
      await dialog.getByLabel('Emoji set').selectOption({ label: 'Plain text' });
      await saved();
      t.equal((await settingsNow()).emojiset, 'text', 'the emoji set is saved');

      // The message times follow the twenty-four-hour setting.
      const time = await page.locator('.msg').first().getAttribute('aria-label');
      t.notMatch(time ?? '', /AM|PM/, 'times read 14:05, not 2:05 PM');

      await dialog.getByLabel('Theme').selectOption({ label: 'Dark' });
      await saved();
      t.equal((await settingsNow()).color_scheme, 2, 'the theme is saved');
      await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
      await screenshot(page, 'settings-dark-wide.png');

      await dialog.locator('input[type=file]').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: Buffer.from(png([30, 160, 90, 255])) });
      await dialog.getByText('Saved: your avatar.').waitFor();
      const uploaded = (await api.get(`/users/${server.owner.email}`)).body.user?.avatar_url as string;
      t.match(uploaded, /^\/user_avatars\/(?!default\/)/, 'the server holds an uploaded avatar');
      const mine = page.locator('.me img.avatar-image');
      await mine.waitFor();
      t.equal(await mine.getAttribute('src'), uploaded, 'the sidebar shows the new avatar');
      await page.waitForFunction(() => (document.querySelector('.me img.avatar-image') as HTMLImageElement | null)?.naturalWidth ?? 0 > 0);
      t.ok(await mine.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'and it loads');

      await page.setViewportSize({ width: 375, height: 740 });
      await screenshot(page, 'settings-dark-narrow.png');
      await dialog.getByLabel('Theme').selectOption({ label: 'Light' });
      await page.waitForFunction(() => document.documentElement.dataset.theme === 'light');
      await screenshot(page, 'settings-light-narrow.png');
      await dialog.getByRole('button', { name: 'Close' }).click();
      await page.setViewportSize({ width: 1366, height: 820 });
      // Enter sends, as set.
      await page.getByRole('textbox', { name: 'Topic' }).fill('keys');
      await page.getByRole('textbox', { name: /Message/ }).first().fill('Sent with Enter');
      await page.getByRole('textbox', { name: /Message/ }).first().press('Enter');
      await page.locator('.msg').filter({ hasText: 'Sent with Enter' }).waitFor();
      t.same(errors, [], 'no page errors');
    });

    await t.test('a message is scheduled from the compose box, then edited and cancelled from the list', async (t) => {
      const compose = page.getByRole('textbox', { name: 'Message' });
      const scheduledNow = async () => (await api.get('/scheduled_messages')).body.scheduled_messages as { scheduled_message_id: number; content: string; scheduled_delivery_timestamp: number; topic: string }[];
      for (const [text, when] of [['Standup notes at nine', '2030-01-02T09:00'], ['Happy new year!', '2031-01-01T00:00']] as const) {
        await page.getByRole('textbox', { name: 'Topic' }).fill('plans');
        await compose.fill(text);
        await page.getByRole('button', { name: 'Send later' }).click();
        const dialog = page.getByRole('dialog', { name: 'Schedule message' });
        await dialog.getByLabel('Send at').fill(when);
        await dialog.getByRole('button', { name: 'Schedule' }).click();
        await page.getByRole('status').filter({ hasText: new RegExp(`^Scheduled for .*${when.slice(0, 4)}`) }).waitFor();
        t.equal(await compose.inputValue(), '', 'the compose box is emptied');
      }
      const scheduled = await scheduledNow();
      t.same(scheduled.map((message) => [message.content, message.topic, message.scheduled_delivery_timestamp]),
        [['Standup notes at nine', 'plans', Date.UTC(2030, 0, 2, 9) / 1000], ['Happy new year!', 'plans', Date.UTC(2031, 0, 1) / 1000]], 'both are scheduled, at the chosen times');
      t.equal(await page.locator('.msg').filter({ hasText: 'Standup notes' }).count(), 0, 'and not sent');

      await page.getByRole('button', { name: 'Scheduled messages, 2' }).click();
      const list = page.getByRole('dialog', { name: 'Scheduled messages' });
      const first = list.getByRole('listitem').filter({ has: page.getByText('#general › plans') }).first();
      await first.getByLabel('Message text').fill('Standup notes at half past nine');
      await first.getByLabel('Send at').fill('2030-01-02T09:30');
      await first.getByRole('button', { name: 'Save changes' }).click();
      await list.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      await shots('scheduled-messages');
      t.same(await seriousAccessibilityViolations(page), [], 'axe-core: no serious violations in the scheduled messages list');
      const second = list.getByRole('listitem').filter({ hasText: 'Happy new year' });
      await list.getByRole('listitem').nth(1).getByRole('button', { name: 'Cancel message' }).click();
      await list.getByRole('status').filter({ hasText: 'will not be sent' }).waitFor();
      t.equal(await second.count(), 0, 'the cancelled one leaves the list');
      t.same((await scheduledNow()).map((message) => [message.content, message.scheduled_delivery_timestamp]), [['Standup notes at half past nine', Date.UTC(2030, 0, 2, 9, 30) / 1000]], 'edited and cancelled on the server');
      await list.getByRole('button', { name: 'Close' }).click();
      await page.getByRole('button', { name: 'Scheduled messages, 1' }).waitFor();
      t.same(errors, [], 'no page errors');
    });

    await t.test('saved snippets are created, inserted and deleted from the compose box', async (t) => {
      const compose = page.getByRole('textbox', { name: 'Message' });
      await compose.fill('Thanks for the report! I will look at it today.');
      await page.getByRole('button', { name: 'Saved snippets' }).click();
      const dialog = page.getByRole('dialog', { name: 'Saved snippets' });
      t.equal(await dialog.getByLabel('Text').inputValue(), 'Thanks for the report! I will look at it today.', 'the new snippet starts from the compose text');
      await dialog.getByLabel('Title').fill('Thanks');
      await dialog.getByRole('button', { name: 'Save snippet' }).click();
      await dialog.getByRole('button', { name: 'Insert Thanks' }).waitFor();
      await dialog.getByLabel('Title').fill('Meeting link');
      await dialog.getByLabel('Text').fill('Join at https://meet.example.com/daily');
      await dialog.getByRole('button', { name: 'Save snippet' }).click();
      await dialog.getByRole('button', { name: 'Insert Meeting link' }).waitFor();
      const saved = (await api.get('/saved_snippets')).body.saved_snippets as { id: number; title: string; content: string }[];
      t.same(saved.map((snippet) => snippet.title).sort(), ['Meeting link', 'Thanks'], 'both are saved on the server');
      await shots('saved-snippets');
      t.same(await seriousAccessibilityViolations(page), [], 'axe-core: no serious violations in the snippets dialog');
      await dialog.getByRole('button', { name: 'Delete Thanks' }).click();
      await dialog.getByRole('button', { name: 'Insert Thanks' }).waitFor({ state: 'detached' });
      t.same((await api.get('/saved_snippets')).body.saved_snippets.map((snippet: { title: string }) => snippet.title), ['Meeting link'], 'deleted on the server');
      await dialog.getByRole('button', { name: 'Close' }).click();

      await compose.fill('See you there:');
      await page.getByRole('button', { name: 'Saved snippets' }).click();
      await dialog.getByRole('button', { name: 'Insert Meeting link' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.waitForFunction(() => document.querySelector<HTMLTextAreaElement>('.compose-text')!.value.includes('meet.example'));
      t.equal(await compose.inputValue(), 'See you there: Join at https://meet.example.com/daily ', 'inserted at the caret');
      await compose.press('Enter');
      await page.locator('.msg').filter({ hasText: 'meet.example.com/daily' }).waitFor();
      t.same(errors, [], 'no page errors');
    });

    await t.test('a conversation of 10,000 messages keeps only a window of them in the page', async (t) => {
      const TOTAL = 10_000;
      await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'long' }] });
      const longId: number = (await api.get('/get_stream_id', { stream: 'long' })).body.stream_id;
      // As fast as the server takes them: 50 sends in flight at a time.
      let next = 1;
      const refused: number[] = [];
      await Promise.all(Array.from({ length: 50 }, async () => {
        while (next <= TOTAL) {
          const n = next++;
          const sent = await api.post('/messages', { type: 'stream', to: String(longId), topic: 'history', content: `long ${n}` });
          if (sent.status !== 200) refused.push(n);
        }
      }));
      t.same(refused, [], 'all sent');
      const first: number = (await api.get('/messages', { narrow: [{ operator: 'channel', operand: longId }], anchor: 'oldest', num_before: 0, num_after: 1 })).body.messages[0].id;
      await page.getByRole('button', { name: /^Channel long/ }).click();
      const feed = page.getByRole('log', { name: 'Messages' });
      await page.getByRole('heading', { name: '#long' }).waitFor();
      await page.locator('.msg').first().waitFor();
      const onScreen = (id: number) => page.evaluate((id) => {
        const node = document.querySelector(`.msg[data-id="${id}"]`);
        if (!node) return false;
        const box = node.getBoundingClientRect();
        const view = document.querySelector('.feed')!.getBoundingClientRect();
        return box.bottom > view.top && box.top < view.bottom;
      }, id);
      let most = 0;
      for (let i = 0; i < 400 && !(await onScreen(first)); i++) {
        most = Math.max(most, await page.locator('.msg').count());
        await feed.evaluate((node) => (node.scrollTop = 0));
        await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      }
      t.ok(await onScreen(first), 'scrolling to the top reaches the first message');
      const loaded = Number(await feed.getAttribute('data-loaded'));
      t.equal(loaded, TOTAL, 'all 10,000 loaded');
      t.ok(most < 300, `the page never held more than a window of them (${most} at most)`);
      t.same(errors, [], 'no page errors');
    });
  });
}

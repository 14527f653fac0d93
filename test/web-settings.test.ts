import { chromium } from 'playwright-core';
import t from 'tap';
import { png } from './helpers/images.ts';
import { startTestServer } from './helpers/server.ts';
import { CHROMIUM, chromiumMissing, LAUNCH_ARGS, screenshot, signIn } from './helpers/web.ts';

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
    const context = await browser.newContext({ viewport: { width: 1366, height: 820 }, colorScheme: 'light' });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await signIn(page, server.url, server.owner.email, server.ownerPassword);
    await page.getByRole('heading', { name: '#general' }).waitFor();
    // The server has no GET /settings: a registration reads them.
    const settingsNow = async () => (await api.post('/register', { fetch_event_types: ['user_settings'], event_types: ['user_settings'] })).body.user_settings ?? {};

    await t.test('the settings page changes the personal settings, the name and the avatar', async (t) => {
      await page.getByRole('button', { name: 'Settings' }).click();
      const dialog = page.getByRole('dialog', { name: 'Settings' });
      await dialog.waitFor();
      await screenshot(page, 'settings-light-wide.png');
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
  });
}

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { png } from './images.ts';
import type { ApiClient } from './server.ts';

// The web client in a real browser: Debian's Chromium driven by playwright-core (whose own browser download
// does not work here). CI installs Chromium (.ci/run); without it the web tests fail rather than skip.
export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing = () => existsSync(CHROMIUM) ? null : `Chromium is not installed at ${CHROMIUM}: install it with "apt-get install -y --no-install-recommends chromium" (.ci/run does)`;

/** Where the web tests write their screenshots (listed in README's web client section). */
export const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'web');

// Headless as root in a sandbox, and quiet: without the background-networking flags Chromium keeps trying to
// reach Google's hosts, which this network refuses.
export const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });

export async function signIn(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, name);
  await page.mouse.move(0, 0);
  await page.screenshot({ path });
  return path;
}

/** A custom emoji, uploaded as an administrator does (multipart, as the original's clients send it). */
export async function uploadEmoji(api: ApiClient, name: string): Promise<void> {
  const form = new FormData();
  form.append('f1', new Blob([new Uint8Array(png([200, 40, 40, 255]))]), 'emoji.png');
  const auth = `Basic ${Buffer.from(`${api.credentials!.email}:${api.credentials!.key}`).toString('base64')}`;
  const response = await fetch(`${api.baseUrl}/api/v1/realm/emoji/${name}`, { method: 'POST', headers: { Authorization: auth }, body: form });
  if (response.status !== 200) throw new Error(`emoji upload failed: ${await response.text()}`);
}

/** The serious and critical violations an axe-core scan of the page finds, one line each (none: []). */
export async function seriousAccessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated over the debugging protocol, which the page's script-src does not govern.
  if (!await page.evaluate('typeof axe !== "undefined"')) await page.evaluate(readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8'));
  return page.evaluate(async () => {
    const result = await (globalThis as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 6).map((n) => n.target.join(" ") + " [" + ((n as unknown as { failureSummary: string }).failureSummary ?? "").replace(/\s+/g, " ").slice(0, 160) + "]").join("; ")}`);
  });
}

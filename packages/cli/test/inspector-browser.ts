import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium, installed by `.ci/run` (apt package `chromium`); no browser is downloaded. */
export const chromiumPath = '/usr/bin/chromium';

/** Where screenshots go (git-ignored; CI keeps them as artifacts). */
export const screenshotDirectory = fileURLToPath(new URL('../../../artifacts/inspector/', import.meta.url));

/** Why the browser tests cannot run here, or `undefined` when they can. In CI a missing Chromium is a failure, not a skip. */
export function missingChromium(): string | undefined {
  return existsSync(chromiumPath)
    ? undefined
    : `no Chromium at ${chromiumPath} (apt-get install chromium; .ci/run installs it)`;
}

// Flags for a headless run that talks to nothing but the page's server.
const chromiumFlags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A tab and what went wrong in it: console errors, uncaught page errors and requests that left 127.0.0.1. */
export interface InspectorTab {
  readonly page: Page;
  readonly problems: string[];
}

/** A headless Chromium with a fresh profile directory. */
export interface InspectorBrowser {
  /** A new tab (its own sessionStorage) at the given viewport size. */
  open(width?: number, height?: number): Promise<InspectorTab>;
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Navigates a tab of the inspector to a hash route and waits for that view's fresh render: the view on
 * screen before is marked stale first, so a view of the same kind does not pass for the new one.
 * (Scripts run in the page are strings: this file is type-checked without the DOM library.)
 */
export async function showView(page: Page, route: string, view: string, timeoutMs = 30_000): Promise<void> {
  await page.evaluate(
    `document.querySelector('[data-view]')?.setAttribute('data-stale', 'true'); location.hash = ${JSON.stringify(route)};`,
  );
  await page.locator(`[data-view="${view}"]:not([data-stale])`).waitFor({ timeout: timeoutMs });
}

/** The tab's location hash. */
export async function currentHash(page: Page): Promise<string> {
  return await page.evaluate<string>('location.hash');
}

/** Launches Chromium for the inspector tests (profile in a temporary directory, removed on close). */
export async function launchInspectorBrowser(): Promise<InspectorBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'mnemo-chromium-'));
  // launchPersistentContext is playwright's way to pass --user-data-dir: a fresh, empty profile.
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: chromiumFlags,
    viewport: { width: 1280, height: 900 },
  });
  await mkdir(screenshotDirectory, { recursive: true });
  for (const page of context.pages()) await page.close();
  return {
    async open(width = 1280, height = 900) {
      const problems: string[] = [];
      const page = await context.newPage();
      await page.setViewportSize({ width, height });
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.protocol !== 'data:' && url.hostname !== '127.0.0.1')
          problems.push(`request left loopback: ${request.url()}`);
      });
      return { page, problems };
    },
    async screenshot(page, name) {
      await page.screenshot({ path: join(screenshotDirectory, `${name}.png`), fullPage: true });
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

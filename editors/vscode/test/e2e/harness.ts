// Processes for the end-to-end test: the scripted fake provider, code-server with the
// packaged extension installed, and headless Chromium driving it. Everything listens on
// loopback only and is killed in `stopAll`.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { chromium, type Browser, type Page } from 'playwright-core';

export interface E2eEnv {
  codeServer: string;
  vsix: string;
  copilotLs: string;
  fakeProvider: string;
  fixture: string;
  outDir: string;
  chromium: string;
}

/** Reads the inputs run.sh passes; a missing one fails the test with the variable's name. */
export function e2eEnv(): E2eEnv {
  const need = (name: string): string => {
    const v = process.env[name];
    if (!v) {
      throw new Error(`${name} is not set (run editors/vscode/test/run.sh)`);
    }
    if (!existsSync(v)) {
      throw new Error(`${name}=${v} does not exist`);
    }
    return v;
  };
  return {
    codeServer: need('CODE_SERVER_BIN'),
    vsix: need('VSIX'),
    copilotLs: need('COPILOT_LS_BIN'),
    fakeProvider: need('FAKE_PROVIDER_BIN'),
    fixture: need('FIXTURE_WORKSPACE'),
    outDir: process.env.TEST_OUTPUT_DIR ?? path.resolve('test-output'),
    chromium: process.env.CHROMIUM_BIN ?? '/usr/bin/chromium',
  };
}

const children: ChildProcess[] = [];

/** An environment for child processes without any real provider key. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/_API_KEY$/.test(k) && !k.startsWith('COPILOT_LS_') && !k.startsWith('VSCODE_')) {
      env[k] = v;
    }
  }
  return { ...env, ...extra };
}

function track(child: ChildProcess, logFile: string): ChildProcess {
  children.push(child);
  const log = createWriteStream(logFile);
  child.stderr?.pipe(log);
  return child;
}

/** Starts `fake-provider SCRIPT --record FILE` and resolves with the port it printed. */
export function startFakeProvider(bin: string, script: string, record: string, logDir: string): Promise<number> {
  const child = track(spawn(bin, [script, '--record', record], { stdio: ['ignore', 'pipe', 'pipe'], detached: true }), path.join(logDir, 'fake-provider.log'));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      const port = Number(line.trim());
      if (Number.isInteger(port) && port > 0) {
        resolve(port);
      } else {
        reject(new Error(`fake-provider printed ${JSON.stringify(line)} instead of a port`));
      }
    });
    child.once('exit', (code) => reject(new Error(`fake-provider exited with ${code} before printing its port`)));
    child.once('error', reject);
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
    srv.once('error', reject);
  });
}

/** Polls `check` until it returns a value; for conditions outside the DOM (files, HTTP). */
export async function waitUntil<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) {
      return v;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface CodeServer {
  url: string;
  userSettings: string;
}

/** Installs `vsix` (default: run.sh's, with no server inside) as `code-server --install-extension` does. */
export function installExtension(env: E2eEnv, extensionsDir: string, home: string, vsix = env.vsix): void {
  const r = spawnSync(env.codeServer, ['--extensions-dir', extensionsDir, '--install-extension', vsix], {
    env: cleanEnv({
      XDG_CONFIG_HOME: path.join(home, 'config'),
      XDG_DATA_HOME: path.join(home, 'data'),
      // The server keeps its workspace index under XDG_CACHE_HOME: not in the real home.
      XDG_CACHE_HOME: path.join(home, 'cache'),
    }),
    encoding: 'utf8',
  });
  if (r.status !== 0 || !/successfully installed/.test(r.stdout)) {
    throw new Error(`installing ${vsix} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
}

/** More for one code-server: test-only extensions to install, variables for its processes. */
export interface CodeServerExtras {
  /** Installed besides the extension under test (the scripted language model provider). */
  vsixes?: string[];
  env?: Record<string, string>;
}

/** Starts code-server on `workspace` with `settings` as the User settings; logs go to `logDir`. */
export async function startCodeServer(
  env: E2eEnv,
  home: string,
  workspace: string,
  settings: object,
  logDir = env.outDir,
  vsix = env.vsix,
  extras: CodeServerExtras = {},
): Promise<CodeServer> {
  const userData = path.join(home, 'user-data');
  const extensionsDir = path.join(home, 'extensions');
  mkdirSync(path.join(userData, 'User'), { recursive: true });
  const userSettings = path.join(userData, 'User', 'settings.json');
  writeFileSync(userSettings, JSON.stringify(settings, null, 2));
  installExtension(env, extensionsDir, home, vsix);
  for (const other of extras.vsixes ?? []) {
    installExtension(env, extensionsDir, home, other);
  }

  const port = await freePort();
  const args = [
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${port}`,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--user-data-dir', userData,
    '--extensions-dir', extensionsDir,
    workspace,
  ];
  const child = spawn(env.codeServer, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: cleanEnv({
      ...extras.env,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      XDG_DATA_HOME: path.join(home, 'data'),
      // The server keeps its workspace index under XDG_CACHE_HOME: not in the real home.
      XDG_CACHE_HOME: path.join(home, 'cache'),
    }),
  });
  track(child, path.join(logDir, 'code-server.log'));
  child.stdout?.pipe(createWriteStream(path.join(logDir, 'code-server.stdout.log')));
  const url = `http://127.0.0.1:${port}`;
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  await waitUntil('code-server /healthz', async () => {
    if (exited !== undefined) {
      throw new Error(`code-server exited with ${exited}; see ${logDir}/code-server.log`);
    }
    try {
      return (await fetch(`${url}/healthz`)).ok || undefined;
    } catch {
      return undefined;
    }
  }, 60_000);
  return { url, userSettings };
}

export async function launchBrowser(env: E2eEnv): Promise<Browser> {
  return chromium.launch({
    executablePath: env.chromium,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

/** Kills every process this harness started, with their children (own process groups). */
export function stopAll(): void {
  for (const child of children.splice(0)) {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }
  }
}

// ---- Workbench helpers: each waits on the DOM, never on time. ----

export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`>${title}`);
  // Pick the row whose label is exactly the title, not a longer one that contains it.
  const row = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(title)}$`) }) }).first();
  await row.waitFor({ state: 'visible' });
  await row.click();
}

export async function openFile(page: Page, relativePath: string): Promise<void> {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible' });
  await input.fill(relativePath);
  const name = path.basename(relativePath);
  const row = page
    .locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(name)}$`) }) })
    .first();
  await row.waitFor({ state: 'visible' });
  await row.click();
  await page.locator(`.tabs-container .tab.active[aria-label*="${path.basename(relativePath)}"]`).first().waitFor();
}

/** Types into the open input box (showInputBox) and accepts it. */
export async function answerInputBox(page: Page, title: string, text: string): Promise<void> {
  const widget = page.locator('.quick-input-widget', { hasText: title });
  await widget.waitFor({ state: 'visible' });
  const input = widget.locator('.quick-input-box input');
  await input.fill(text);
  await input.press('Enter');
  await widget.waitFor({ state: 'hidden' });
}

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function notification(page: Page, text: string | RegExp) {
  return page.locator('.notifications-toasts .notification-list-item', { hasText: text });
}

/** The answer webview's document (VS Code nests the page in two iframes). */
export function answerFrame(page: Page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

export async function cursorAt(page: Page, line: number, column = 1): Promise<void> {
  await page.locator('.statusbar-item[id="status.editor.selection"]', { hasText: `Ln ${line}, Col ${column}` }).waitFor();
}

/** The extension's status bar item once the server runs (the extension is active). */
export function serverRunning(page: Page) {
  return page.locator('.statusbar-item', { hasText: 'copilot-ls', has: page.locator('.codicon-comment-discussion') }).first();
}

/** A toast with the error icon (not an info or a progress notification). */
export function errorNotification(page: Page, text: string | RegExp) {
  return page.locator('.notifications-toasts .notification-list-item', { hasText: text, has: page.locator('.codicon-error') });
}

/** Closes the settings editor (a modal in this VS Code) so the palette works again. */
export async function closeSettings(page: Page): Promise<void> {
  const settings = page.locator('.settings-editor');
  await waitUntil('the settings editor to close', async () => {
    if (!(await settings.isVisible())) {
      return true;
    }
    await page.keyboard.press('Escape');
    return undefined;
  });
}

/**
 * The selectors of the answer view (`answerFrame`) whose centre something of the
 * workbench lies over (a notification toast), so a click there would not reach them.
 */
export async function coveredInAnswer(page: Page, selectors: string[]): Promise<string[]> {
  const covered: string[] = [];
  for (const selector of selectors) {
    const box = await answerFrame(page).locator(selector).first().boundingBox();
    if (!box) {
      throw new Error(`${selector} is not on screen`);
    }
    const hit = await page.evaluate(([x, y]) => {
      const element = document.elementFromPoint(x, y);
      return element?.closest('.notifications-toasts, .notification-toast') ? (element.textContent ?? 'a notification') : undefined;
    }, [box.x + box.width / 2, box.y + box.height / 2]);
    if (hit !== undefined) {
      covered.push(`${selector} (under "${hit.slice(0, 80)}")`);
    }
  }
  return covered;
}

/** The answer view's buttons and question box, which nothing may cover. */
export const THREAD_CONTROLS = ['#question', '#send', '#new'];

/** The lines of a recorded provider request file. */
export function readRequests(file: string): Array<{ path: string; body: { model?: string; messages?: Array<{ role: string; content: unknown }> } }> {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

/** The extension's log so far (its output channel, as VS Code writes it to disk). */
export function extensionLogIn(userData: string): string {
  const logs = path.join(userData, 'logs');
  return readdirSync(logs, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(path.join('copilot-ls.copilot-ls', 'copilot-ls.log')))
    .map((f) => readFileSync(path.join(logs, f), 'utf8'))
    .join('\n');
}

/** What the extension wrote to its output channel `name` (VS Code keeps each on disk). */
export function outputChannelIn(userData: string, name: string): string {
  const logs = path.join(userData, 'logs');
  return readdirSync(logs, { recursive: true, encoding: 'utf8' })
    .filter((f) => path.basename(f).endsWith(`-${name}.log`) || path.basename(f) === `${name}.log`)
    .map((f) => readFileSync(path.join(logs, f), 'utf8'))
    .join('\n');
}

/** A setting in the open Settings editor, by its label ("Model", "Path", ...). */
export function settingItem(page: Page, label: string) {
  return page
    .locator('.settings-editor .setting-item', { has: page.locator('.setting-item-label', { hasText: new RegExp(`^${label}$`) }) })
    .first();
}

export async function focusProblems(page: Page): Promise<void> {
  await runCommand(page, 'View: Focus Problems (Errors, Warnings, Infos)');
  await page.locator('.markers-panel').waitFor({ state: 'visible' });
}

/** Searches the open Settings editor and waits for its count to read `found`. */
export async function searchSettings(page: Page, query: string, found: string | RegExp): Promise<void> {
  await page.locator('.settings-editor .suggest-input-container').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.type(query);
  await page.locator('.settings-editor .settings-count-widget', { hasText: found }).waitFor();
}

/** Closes the answer view's tab and waits for its webview to go. */
export async function closeAnswerTab(page: Page): Promise<void> {
  const tab = page.locator('.tabs-container .tab', { hasText: /^copilot-ls$/ });
  await tab.hover();
  await tab.locator('.tab-actions .action-label').first().click();
  await page.locator('iframe.webview.ready').waitFor({ state: 'detached' });
}

/**
 * Brings the thread back into view (another editor opened in its group) with the focus in
 * it, as Show Last Answer leaves it. The workbench moves the focus into a webview
 * asynchronously: a link clicked before the focus arrived opens its editor, and the late
 * focus then takes it back (no cursor in the status bar). A user is never that quick; a
 * test must wait for the page to hold the focus.
 */
export async function showThread(page: Page): Promise<void> {
  await runCommand(page, 'copilot-ls: Show Last Answer');
  await answerFrame(page).locator('#question').waitFor();
  await waitUntil('the thread to hold the focus', async () => (await answerFrame(page).locator('body').evaluate(() => document.hasFocus())) || undefined);
}

/** Moves the cursor of the active editor to a line with Ctrl+G. */
export async function goToLine(page: Page, line: number): Promise<void> {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`:${line}`);
  await input.press('Enter');
  await cursorAt(page, line);
}

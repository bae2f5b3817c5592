// End to end with the release package: the .vsix that `scripts/package.sh --debug` makes
// (the server inside it), installed with `code-server --install-extension` into a window
// with no copilot-ls.server.path and no provider. The bundled server runs, answers a
// question with the places it found, and Check Setup lists its checks.

import assert from 'node:assert/strict';
import { accessSync, constants, existsSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { answerFrame, answerInputBox, errorNotification, notification, outputChannelIn, runCommand, serverRunning, waitUntil } from './harness';
import { QUESTION } from './scenario';
import { closeSession, extensionLog, openSession, screenshot, stepsOf, type Session } from './session';

let session: Session | undefined;
let page: Page;
const step = stepsOf(() => session);

/** The .vsix run.sh had scripts/package.sh make, or why there is none. */
function packagedVsix(): string {
  const vsix = process.env.PACKAGED_VSIX;
  if (!vsix) {
    throw new Error(process.env.PACKAGED_VSIX_ERROR ?? 'PACKAGED_VSIX is not set (run editors/vscode/test/run.sh)');
  }
  assert.ok(existsSync(vsix), `${vsix} does not exist`);
  return vsix;
}

/** The text of the Output panel's editor as shown (wrapped; Monaco's spaces are no-break). */
async function outputShown(): Promise<string> {
  const text = await page.locator('.part.panel .monaco-editor .view-lines').first().innerText();
  return text.replace(/\u00a0/g, ' ');
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('the packaged .vsix with its bundled server, no server.path, no model', { timeout: 600_000 }, () => {
  let version: string;

  before(async () => {
    const vsix = packagedVsix();
    // copilot-ls-VERSION-linux-x64.vsix
    version = /^copilot-ls-(.+)-linux-x64\.vsix$/.exec(path.basename(vsix))?.[1] ?? '?';
    session = await openSession({ name: 'packaged', vsix, viewport: { width: 1400, height: 900 } });
    page = session.page;
  });

  after(async () => {
    await closeSession(session);
  });

  step('runs the server bundled in the extension, of the extension\'s own version', async () => {
    await serverRunning(page).waitFor({ timeout: 60_000 });
    const used = await waitUntil('the extension to log which server it runs', () => /using copilot-ls at (\S+) \(from (\S+)\)/.exec(extensionLog(session!)) ?? undefined);
    assert.equal(used[2], 'bundled', used[0]);
    // code-server installs it as copilot-ls.copilot-ls-VERSION, its target left out.
    const installed = path.join(session!.work, 'home', 'extensions', `copilot-ls.copilot-ls-${version}`, 'server', 'copilot-ls');
    assert.equal(used[1], installed);
    accessSync(installed, constants.X_OK);
    await waitUntil('the version check in the log', () => (extensionLog(session!).includes(`copilot-ls server version ${version}, extension version ${version}`) ? true : undefined));
    assert.equal(await notification(page, /is (older|newer) than this extension|reports no version/).count(), 0, 'no version warning');
    assert.equal(await errorNotification(page, 'copilot-ls').count(), 0, 'no error at startup');
  });

  step('answers a question without a model: the places the bundled server found', async () => {
    await runCommand(page, 'copilot-ls: Ask');
    await answerInputBox(page, 'copilot-ls: Ask', QUESTION);
    const answered = answerFrame(page).locator('.exchange[data-state="answered"]', { hasText: QUESTION });
    await answered.locator('.answer a', { hasText: /^src\/rate_limit\.rs:\d+/ }).first().waitFor({ timeout: 90_000 });
    assert.match(await answered.locator('.answer').innerText(), /No model is configured/);
    await screenshot(session!, 'packaged-no-model-answer');
  });

  step('Check Setup shows each check on a line of its own: ok, warn or fail, and what it found', async () => {
    await runCommand(page, 'copilot-ls: Check Setup');
    // Shown in the Output panel (which wraps long lines) ...
    await waitUntil('the checks in the Output panel', async () => {
      const shown = await outputShown().catch(() => '');
      return /Check Setup at .*: \d+ ok, \d+ warn, \d+ fail/.test(shown) && /^ok +version: /m.test(shown) ? true : undefined;
    });
    await page.locator('.part.panel', { hasText: 'copilot-ls Setup' }).first().waitFor();
    await screenshot(session!, 'check-setup');
    // ... and line by line as the channel holds them.
    const userData = path.join(session!.work, 'home', 'user-data');
    const checkLines = (t: string) => t.split('\n').filter((l) => /^(ok|warn|fail) +[^:]+: /.test(l));
    // Complete once it holds as many checks as its first line counts.
    const text = await waitUntil('the copilot-ls Setup channel on disk', () => {
      const t = outputChannelIn(userData, 'copilot-ls Setup');
      const counts = /: (\d+) ok, (\d+) warn, (\d+) fail$/m.exec(t);
      return counts && checkLines(t).length === Number(counts[1]) + Number(counts[2]) + Number(counts[3]) ? t : undefined;
    });
    const checks = checkLines(text);
    assert.match(text, new RegExp(`^ok +server: \\S+/server/copilot-ls \\(from bundled\\), version ${escape(version)}$`, 'm'), text);
    assert.match(text, new RegExp(`^ok +version: the server and this extension are both ${escape(version)}$`, 'm'), text);
    // The server's own checks follow the extension's two (copilot.doctor ran).
    assert.ok(checks.length >= 4, `the server's checks are listed:\n${text}`);
    assert.doesNotMatch(text, /^\w+ +doctor: /m, `copilot.doctor ran:\n${text}`);
    // No provider or key is configured, and this VS Code runs language models: the
    // editor's model is the provider (contract v5), and with none listed yet its model
    // check is a warning that says what to do (answers list places); nothing fails.
    assert.match(text, /^ok +provider: editor \(the default/m, text);
    assert.match(text, /^warn +model: the editor lists no language model yet/m, text);
    assert.doesNotMatch(text, /^fail +/m, text);
    // Issue #55 item 10: in VS Code the advice names the copilot-ls settings, never the
    // environment variables a command line sets (a variable in parentheses says where a
    // value came from).
    assert.doesNotMatch(text, /COPILOT_LS_[A-Z_]+(?!\))/, text);
  });

  step('Check Setup offers to open the settings that choose a model', async () => {
    // A warning when a check failed, else a note; either offers the settings.
    const offer = notification(page, /copilot-ls: Check Setup: /);
    await offer.waitFor();
    await offer.locator('.monaco-button', { hasText: 'Open Settings' }).click();
    await page.locator('.settings-editor .setting-item', { hasText: /copilot-ls/i }).first().waitFor();
    await screenshot(session!, 'check-setup-open-settings');
  });
});

// End to end in real VS Code on a workspace of two folders (a `.code-workspace` holding
// two copies of the fixture, so every relative path is in both): an answer about the
// second folder names its files under that folder's name, and its links, Go to Citation,
// the Citations view and its suggested edit reach the second folder's files, never the
// first's; a selection there reaches the model under the folder's name; a folder added to
// the workspace, then removed, is followed (vscode-languageclient sends the folders as
// the server's roots, docs/protocol.md section 10).

import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { answerFrame, answerInputBox, cursorAt, runCommand, serverRunning, showThread, waitUntil } from './harness';
import { ADDED, ADDED_QUESTION, CONFIG_NEW, FIRST, MULTI_ROOT_SCRIPT, QUESTION, SECOND } from './multi_root_scenario';
import { closeSession, openSession, requests, screenshot, stepsOf, writeWorkspaceFile, type Session } from './session';

let session: Session | undefined;
let page: Page;
const step = stepsOf(() => session);

/** Where `relative` is in the window's folder `root`. */
function fileIn(root: string, relative: string): string {
  return path.join(session!.work, root, relative);
}

/**
 * Waits for the active editor to show `relative` of the folder `root`: both folders hold
 * the same paths, so the tab's name says nothing; the breadcrumbs of a multi-root window
 * start with the folder's name.
 */
async function activeFileIs(root: string, relative: string): Promise<void> {
  await activeBreadcrumbs([root, ...relative.split('/')]);
}

/** Waits for the active editor's breadcrumbs to read `items`. */
async function activeBreadcrumbs(items: string[]): Promise<void> {
  const want = items.join('\n');
  const crumbs = page.locator('.editor-group-container.active .breadcrumbs-control:not(.hidden)');
  let seen: string[] = [];
  await waitUntil(`the active editor to show ${items.join('/')}`, async () => {
    seen = await crumbs.allInnerTexts();
    return seen.some((t) => t.trim() === want) || undefined;
  }).catch(() => assert.fail(`the active editor's breadcrumbs read ${JSON.stringify(seen)}, not ${JSON.stringify(want)}`));
}

/** A new question from the palette. */
async function ask(question: string): Promise<void> {
  await runCommand(page, 'copilot-ls: Ask');
  await answerInputBox(page, 'copilot-ls: Ask', question);
}

describe('the extension in a workspace of two folders', { timeout: 600_000 }, () => {
  before(async () => {
    session = await openSession({ name: 'multi-root', script: MULTI_ROOT_SCRIPT, viewport: { width: 1500, height: 950 }, roots: [FIRST, SECOND] });
    page = session.page;
  });

  after(async () => {
    await closeSession(session);
  });

  step('answers about the second folder with its paths under its name, linked to its files', async () => {
    await serverRunning(page).waitFor({ timeout: 60_000 });
    await runCommand(page, 'copilot-ls: Show Last Answer');
    await answerFrame(page).locator('#answer', { hasText: 'No answer yet' }).waitFor();
    await ask(QUESTION);
    const answer = answerFrame(page).locator('.exchange[data-state="answered"]');
    await answer.getByText('The bucket refills lazily').waitFor({ timeout: 60_000 });
    // The server found the model's paths in the second folder: the file it read came back
    // (not "not found"), and the citations are verified links to that folder's files.
    const sent = requests(session!);
    assert.equal(sent.length, 2, 'one model call per scripted turn');
    const toolResults = JSON.stringify(sent[1].body);
    assert.ok(toolResults.includes('fn refill(&mut self)'), `read_file of ${SECOND}/src/rate_limit.rs returned the file: ${toolResults.slice(0, 2000)}`);
    const hrefs = {
      [`${SECOND}/src/rate_limit.rs:26-34`]: `${pathToFileURL(fileIn(SECOND, 'src/rate_limit.rs')).href}#L26-L34`,
      [`${SECOND}/src/config.rs:12-18`]: `${pathToFileURL(fileIn(SECOND, 'src/config.rs')).href}#L12-L18`,
      // The answer's own mention of a cited file, and the suggested edit's place.
      [`${SECOND}/src/rate_limit.rs:35`]: `${pathToFileURL(fileIn(SECOND, 'src/rate_limit.rs')).href}#L35`,
      [`${SECOND}/src/config.rs:5`]: `${pathToFileURL(fileIn(SECOND, 'src/config.rs')).href}#L5`,
    };
    for (const [label, href] of Object.entries(hrefs)) {
      const link = answer.locator('a', { hasText: new RegExp(`^${label.replace(/[.]/g, '\\.')}$`) });
      await link.first().waitFor();
      assert.deepEqual(await link.evaluateAll((as) => as.map((a) => a.getAttribute('href'))), [href], label);
    }
    assert.equal(await answer.getByText('not found in the workspace').count(), 0, 'every citation is verified');
    await answer.locator('.edit', { hasText: 'Document the port' }).locator('pre.diff .added', { hasText: 'The port the second folder listens on.' }).waitFor();
    await screenshot(session!, 'multi-root-answer');
  });

  step('opens a citation link in the second folder\'s file at the cited line', async () => {
    await answerFrame(page).locator('#answer a', { hasText: `${SECOND}/src/rate_limit.rs:26-34` }).click();
    await page.locator('.tabs-container .tab.active[aria-label*="rate_limit.rs"]').first().waitFor();
    await cursorAt(page, 26);
    await activeFileIs(SECOND, 'src/rate_limit.rs');
    await screenshot(session!, 'multi-root-citation-opened');
  });

  step('Go to Citation and the Citations view open the second folder\'s files', async () => {
    await runCommand(page, 'copilot-ls: Go to Citation');
    const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: `${SECOND}/src/config.rs:12-18` }).first();
    await pick.waitFor();
    await pick.click();
    await page.locator('.tabs-container .tab.active[aria-label*="config.rs"]').first().waitFor();
    await cursorAt(page, 12);
    await activeFileIs(SECOND, 'src/config.rs');

    const header = page.locator('.pane-header', { has: page.locator('.title', { hasText: /^Citations$/ }) });
    if ((await header.getAttribute('aria-expanded')) !== 'true') {
      await header.click();
    }
    const tree = page.locator('.pane', { has: header });
    await tree.locator('.monaco-list-row', { hasText: `${SECOND}/src/rate_limit.rs:26-34` }).click();
    await page.locator('.tabs-container .tab.active[aria-label*="rate_limit.rs"]').first().waitFor();
    await cursorAt(page, 26);
    await activeFileIs(SECOND, 'src/rate_limit.rs');
    await header.click();
  });

  step('applies the suggested edit to the second folder\'s file, leaving the first\'s alone', async () => {
    const firstBefore = readFileSync(fileIn(FIRST, 'src/config.rs'), 'utf8');
    await showThread(page);
    const edit = answerFrame(page).locator('.edit', { hasText: 'Document the port' });
    await edit.locator('button.apply').click();
    const row = page.locator('.monaco-list-row[aria-label*="config.rs, making text edits"]');
    const apply = page.locator('.monaco-button', { hasText: /^Apply$/ }).first();
    await apply.waitFor();
    await row.locator('.edit-checkbox').waitFor();
    assert.equal(await row.locator('.edit-checkbox').getAttribute('aria-checked'), 'true', 'the suggested change starts ticked');
    // The preview names the file's folder beside its name.
    const shown = await row.innerText();
    assert.match(shown, new RegExp(SECOND), shown);
    await screenshot(session!, 'multi-root-refactor-preview');
    await apply.click();
    await edit.locator('.edit-note', { hasText: /^applied$/ }).waitFor();
    // The change is in the second folder's editor; saved, it reaches the disk there.
    await runCommand(page, 'copilot-ls: Go to Citation');
    const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: `${SECOND}/src/config.rs:13-19` }).first();
    await pick.waitFor();
    await pick.click();
    await activeFileIs(SECOND, 'src/config.rs');
    await page.locator('.view-lines', { hasText: 'The port the second folder listens on.' }).first().waitFor();
    await page.keyboard.press('Control+S');
    await waitUntil(`the edit on disk in ${SECOND}`, () => readFileSync(fileIn(SECOND, 'src/config.rs'), 'utf8').includes(CONFIG_NEW) || undefined);
    assert.equal(readFileSync(fileIn(FIRST, 'src/config.rs'), 'utf8'), firstBefore, `${FIRST}/src/config.rs is unchanged`);
  });

  step('sends a selection in the second folder\'s file, named under the folder', async () => {
    await runCommand(page, 'copilot-ls: Go to Citation');
    const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: `${SECOND}/src/rate_limit.rs:26-34` }).first();
    await pick.waitFor();
    await pick.click();
    await activeFileIs(SECOND, 'src/rate_limit.rs');
    await cursorAt(page, 26);
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Shift+ArrowDown');
    }
    await page.locator('.statusbar-item[id="status.editor.selection"]', { hasText: 'selected' }).first().waitFor();
    await runCommand(page, 'copilot-ls: Ask About Selection');
    await answerInputBox(page, 'copilot-ls: Ask About Selection', '');
    await answerFrame(page).locator('#answer').getByText('Selection answer').waitFor({ timeout: 60_000 });
    const sent = requests(session!);
    assert.equal(sent.length, 3);
    const body = JSON.stringify(sent[2].body);
    assert.ok(body.includes(`The user is looking at ${SECOND}/src/rate_limit.rs with lines 26-`), body.slice(0, 2000));
  });

  step('follows a folder added to the workspace, and the same folder removed', async () => {
    const { workspaceFile, roots } = session!;
    const added = path.join(session!.work, ADDED);
    cpSync(session!.env.fixture, added, { recursive: true });
    // The window reads its workspace file again when it changes, as when a folder is
    // added from the File menu; the extension host keeps running (the first folder stays).
    writeWorkspaceFile(workspaceFile!, [...roots, added]);
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: ADDED }).first().waitFor();
    await ask(ADDED_QUESTION);
    const cited = answerFrame(page).locator('.exchange[data-state="answered"]', { hasText: ADDED_QUESTION }).locator('.answer li');
    const link = cited.locator('a', { hasText: `${ADDED}/src/main.rs:6-12` });
    await link.waitFor({ timeout: 60_000 });
    assert.equal(await link.getAttribute('href'), `${pathToFileURL(path.join(added, 'src/main.rs')).href}#L6-L12`);
    await screenshot(session!, 'multi-root-folder-added');
    await link.click();
    await cursorAt(page, 6);
    await activeFileIs(ADDED, 'src/main.rs');

    writeWorkspaceFile(workspaceFile!, roots);
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: ADDED }).first().waitFor({ state: 'detached' });
    // Asked again in the same thread: the answer made before the folder left stays above it.
    await showThread(page);
    const box = answerFrame(page).locator('#question');
    await box.fill(ADDED_QUESTION);
    await box.press('Enter');
    const exchanges = answerFrame(page).locator('.exchange[data-state="answered"]', { hasText: ADDED_QUESTION });
    const unverified = exchanges.nth(1).locator('.answer li');
    await unverified.getByText('not found in the workspace').waitFor({ timeout: 60_000 });
    assert.equal(await unverified.locator('a').count(), 0, 'no link into a folder that left the workspace');
    assert.equal(requests(session!).length, 5);
    // The server withdrew the removed folder's diagnostics; that says nothing about the
    // cited text, and the earlier answer's link still opens the file where it was.
    const earlier = exchanges.nth(0).locator('.answer li');
    assert.doesNotMatch(await earlier.innerText(), /changed since/);
    await earlier.locator('a', { hasText: `${ADDED}/src/main.rs:6-12` }).click();
    await cursorAt(page, 6);
    // Outside every folder of the window now: the breadcrumbs show its whole path.
    await activeBreadcrumbs(path.join(added, 'src', 'main.rs').split(path.sep).filter((s) => s !== ''));
    await serverRunning(page).waitFor();
  });
});

// End to end in real VS Code (code-server): the editor's own model (PROTOCOL.md section
// 11). A test-only extension (test/lm_provider) contributes a language model provider with
// scripted replies; our extension runs the built server with no provider set and no key,
// declares the capability, lists the model, and answers the server's `copilot/model`
// requests through `vscode.lm`. Choose Model lists the model; a question asked from the
// palette is answered by it in the thread, with its citation and an edit applied through
// the Refactor Preview; `@copilot-ls` in the Chat view answers with a citation anchor and
// an edit's Apply link.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { ASK_PLACEHOLDER } from '../../src/ask_params';
import { CHAT_ANSWER, CHAT_FOLLOW_UP, CHAT_FOLLOW_UP_ANSWER, CHAT_QUESTION, EDITOR_MODEL_SCRIPT, READ_NEW, REFILL_NEW, THREAD_ANSWER, THREAD_QUESTION } from './editor_model_scenario';
import { answerFrame, focusProblems, openFile, runCommand, serverRunning, showThread, waitUntil } from './harness';
import { closeSession, extensionLog, openSession, screenshot, stepsOf, type Session } from './session';

let session: Session | undefined;
let page: Page;
const step = stepsOf(() => session);

const MODEL_NAME = 'copilot-ls Test Model';

interface LmRequest {
  model: string;
  messages: Array<{ role: string; content: Array<{ text?: string; toolCall?: { name: string }; toolResult?: { callId: string } }> }>;
  tools: string[];
  reply: string | null;
}

/** The requests the scripted language model has had so far. */
function lmRequests(): LmRequest[] {
  return readFileSync(session!.lmRecord, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LmRequest);
}

/** The Refactor Preview's row for `file`, its checkbox, and its Apply button. */
function refactorPreview(file: string) {
  const row = page.locator(`.monaco-list-row[aria-label*="${file}, making text edits"]`);
  return { row, checkbox: row.locator('.edit-checkbox'), apply: page.locator('.monaco-button', { hasText: /^Apply$/ }).first() };
}

describe('the editor\'s own model: no key, a model extension', { timeout: 600_000 }, () => {
  before(async () => {
    session = await openSession({
      name: 'editor-model',
      editorModelScript: EDITOR_MODEL_SCRIPT,
      viewport: { width: 1500, height: 950 },
      // The Chat view and the language model API are on.
      settings: { 'chat.disableAIFeatures': false },
    });
    page = session.page;
  });

  after(async () => {
    await closeSession(session);
  });

  step('declares the capability and lists the provider\'s model to the server', async () => {
    await serverRunning(page).waitFor({ timeout: 60_000 });
    // Listed at start, or (the provider's extension activating later) by the change event.
    await waitUntil(
      'the test model in the list sent to the server',
      () => /the editor's language models( changed)?: .*copilot-ls-test-model/.test(extensionLog(session!)) || undefined,
      60_000,
    );
    assert.match(extensionLog(session!), /initialize declares experimental\.copilotEditorModels/, 'the capability in initialize');
  });

  step('lists the editor\'s models in Choose Model with vendor and family, and saves the choice', async () => {
    await runCommand(page, 'copilot-ls: Choose Model');
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: MODEL_NAME }).first();
    await row.waitFor();
    const text = await row.innerText();
    assert.match(text, /copilot-ls-test · scripted/, text);
    await screenshot(session!, 'choose-model');
    await row.click();
    await waitUntil('copilot-ls.editorModel in the User settings', () => {
      let settings: Record<string, unknown>;
      try {
        settings = JSON.parse(readFileSync(session!.server.userSettings, 'utf8')) as Record<string, unknown>;
      } catch {
        return undefined; // being written
      }
      return typeof settings['copilot-ls.editorModel'] === 'string' && /copilot-ls-test-model/.test(settings['copilot-ls.editorModel'] as string) ? true : undefined;
    });
  });

  step('asks from the palette (a neutral hint in the box) and the editor\'s model answers in the thread, citing', async () => {
    await openFile(page, 'src/main.rs');
    await runCommand(page, 'copilot-ls: Ask');
    // Issue #55 item 17: the hint is not the sample workspace's question. (The palette's
    // own box shows first: wait for Ask's.)
    const input = page.locator(`.quick-input-widget .quick-input-box input[placeholder="${ASK_PLACEHOLDER}"]`);
    await input.waitFor({ state: 'visible' });
    await input.fill(THREAD_QUESTION);
    await input.press('Enter');
    const exchange = answerFrame(page).locator('.exchange[data-state="answered"]', { hasText: THREAD_QUESTION });
    await exchange.waitFor({ timeout: 90_000 });
    await exchange.getByText(THREAD_ANSWER.slice(0, 40)).waitFor();
    await exchange.locator('a', { hasText: 'src/config.rs:21-23' }).first().waitFor();
    // The thread says which model answered, and once where the question went.
    await exchange.locator('.usage', { hasText: `answered by ${MODEL_NAME} (copilot-ls-test)` }).waitFor();
    await exchange.locator('.model-notice', { hasText: "go to that model's provider" }).waitFor();
    await screenshot(session!, 'editor-model-answer');
    // Issue #55 item 6: the propose_edit line names its path once (the server's summary
    // already says `edit src/config.rs:22-22`).
    const line = await exchange.locator('.step', { hasText: 'propose_edit' }).first().innerText();
    assert.equal(line.split('src/config.rs').length - 1, 1, line);
    assert.match(line, /propose_edit — edit src\/config\.rs:\d+/, line);
    const sent = lmRequests().filter((r) => r.reply?.startsWith(THREAD_QUESTION));
    assert.deepEqual(
      sent.map((r) => r.reply),
      [`${THREAD_QUESTION}#0`, `${THREAD_QUESTION}#1`],
      'two model calls: the edit, then the answer',
    );
    // The system prompt first in the first user message, then the question; the tools.
    const first = sent[0].messages[0];
    assert.equal(first.role, 'user');
    assert.ok(first.content.length >= 2 && !first.content[0].text?.includes(THREAD_QUESTION), JSON.stringify(first));
    assert.ok(first.content.some((p) => p.text?.includes(THREAD_QUESTION)), JSON.stringify(first));
    for (const tool of ['search_code', 'read_file', 'propose_edit', 'answer']) {
      assert.ok(sent[0].tools.includes(tool), `${tool} in ${sent[0].tools.join(', ')}`);
    }
    // The second call carries the first's tool call and its result.
    const roles = sent[1].messages.map((m) => `${m.role}:${m.content.map((p) => (p.toolCall ? 'call' : p.toolResult ? 'result' : 'text')).join('+')}`);
    assert.deepEqual(roles.slice(-2), ['assistant:text+call', 'user:result'], roles.join(' '));
  });

  step('names the cited line in the Problems panel row, with the question', async () => {
    await focusProblems(page);
    const row = page.locator('.markers-panel .monaco-list-row', { hasText: 'Cited in the answer to' }).first();
    await row.waitFor();
    const text = await row.innerText();
    // Issue #55 item 5: not only "Cited in the answer to: …", which every row read.
    assert.match(text, /\(1\) fn read<T: std::str::FromStr>\(name: &str, default: T\) -> T — Cited in the answer to: Where is the burst read/, text);
  });

  step('applies the editor model\'s suggested edit from the thread through the Refactor Preview', async () => {
    await showThread(page);
    const edit = answerFrame(page).locator('.edit', { hasText: 'Say why a bad value falls back' });
    await edit.locator('button.apply').click();
    const preview = refactorPreview('config.rs');
    await preview.apply.waitFor();
    assert.equal(await preview.checkbox.getAttribute('aria-checked'), 'true');
    await preview.apply.click();
    await edit.locator('.edit-note', { hasText: /^applied$/ }).waitFor();
    await openFile(page, 'src/config.rs');
    await page.keyboard.press('Control+S');
    await waitUntil('the edit on disk', () => readFileSync(path.join(session!.workspace, 'src/config.rs'), 'utf8').includes(READ_NEW) || undefined);
  });

  step('answers @copilot-ls in the Chat view with a citation anchor and an edit link that applies it', async () => {
    await runCommand(page, 'Chat: Open Chat');
    const input = page.locator('.interactive-input-part .monaco-editor').first();
    await input.click();
    await page.keyboard.type(`@copilot-ls ${CHAT_QUESTION}`);
    await page.keyboard.press('Enter');
    const response = page.locator('.interactive-response').last();
    // The answer stays in view (not folded into "Completed N steps").
    await response.getByText(CHAT_ANSWER.slice(0, 22)).waitFor({ timeout: 90_000 });
    await response.getByText(/Answered by copilot-ls Test Model/).waitFor();
    await screenshot(session!, 'chat-participant-answer');
    assert.ok(
      lmRequests().some((r) => r.reply === `${CHAT_QUESTION}#1`),
      'the chat\'s question went to the model picked in the chat',
    );
    // The citation is an anchor opening its lines.
    const anchor = response.locator('.chat-inline-anchor-widget', { hasText: 'rate_limit.rs' }).first();
    await anchor.waitFor();
    await anchor.click();
    await page.locator('.tabs-container .tab.active[aria-label*="rate_limit.rs"]').first().waitFor();
    // The cited lines selected, 26 to 34: the cursor at the end of the selection.
    await page.locator('.statusbar-item[id="status.editor.selection"]', { hasText: /Ln 34, Col \d+ \(\d+ selected\)/ }).waitFor();
    assert.match(await response.innerText(), /rate_limit\.rs:26-34/);
    // The edit's link runs the thread's Apply: the Refactor Preview, then the file.
    await response.locator('a', { hasText: 'Document refill' }).first().click();
    const preview = refactorPreview('rate_limit.rs');
    await preview.apply.waitFor();
    await preview.apply.click();
    await page.locator('.view-lines', { hasText: 'Adds the tokens earned since the last refill' }).first().waitFor();
    await page.keyboard.press('Control+S');
    await waitUntil('the chat\'s edit on disk', () => readFileSync(path.join(session!.workspace, 'src/rate_limit.rs'), 'utf8').includes(REFILL_NEW) || undefined);
  });

  step('continues the chat\'s conversation with a follow-up', async () => {
    const input = page.locator('.interactive-input-part .monaco-editor').first();
    await input.click();
    await page.keyboard.type(`@copilot-ls ${CHAT_FOLLOW_UP}`);
    await page.keyboard.press('Enter');
    await page.locator('.interactive-response').last().getByText(CHAT_FOLLOW_UP_ANSWER).waitFor({ timeout: 90_000 });
    // The model saw the first question and its answer: the same conversation on the server.
    const followUp = lmRequests().find((r) => r.reply === `${CHAT_FOLLOW_UP}#0`);
    assert.ok(followUp, 'the follow-up reached the model');
    const said = JSON.stringify(followUp.messages);
    assert.ok(said.includes(CHAT_QUESTION), `the earlier question is in the follow-up's transcript: ${said.slice(0, 400)}`);
  });
});

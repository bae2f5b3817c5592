// One end-to-end session, opened before a test file's steps and closed after them: the
// scripted fake provider, code-server with the packaged extension installed, and a
// Chromium page on its workbench; and `stepsOf`, the files' `it` that keeps a screenshot
// and the extension log's tail of a failure. Each test file opens its own session, with
// its own script and window size; or, with no script, the release .vsix with its bundled
// server and no model at all; or, with `roots`, several copies of the fixture opened
// together as a multi-root workspace.

import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  e2eEnv,
  extensionLogIn,
  launchBrowser,
  readRequests,
  startCodeServer,
  startFakeProvider,
  stopAll,
  type CodeServer,
  type CodeServerExtras,
  type E2eEnv,
} from './harness';

export interface SessionOptions {
  /** The folder under test-output for this session's logs; '' for test-output itself. */
  name: string;
  /**
   * The fake provider's script: what the model answers, call by call. Without one there
   * is no provider, no copilot-ls.server.path and no provider setting: the extension
   * runs the server bundled in `vsix`, which answers without a model.
   */
  script?: object;
  /** The .vsix to install (default: run.sh's VSIX, which has no server inside). */
  vsix?: string;
  viewport: { width: number; height: number };
  /**
   * The names of copies of the fixture to open together, in this order, as one
   * `.code-workspace` (a multi-root window). Without it, one copy named tollbooth is
   * opened as a folder.
   */
  roots?: string[];
  /**
   * The scripted language model provider (test/lm_provider, `$LM_PROVIDER_VSIX`) installed
   * too, answering with this script (test/lm_provider/extension.js); the extension runs the built server
   * (`$COPILOT_LS_BIN`) with no provider set and no key, as a user with a model extension.
   */
  editorModelScript?: object[];
  /** More User settings, over the session's own. */
  settings?: object;
}

export interface Session {
  env: E2eEnv;
  /** A temporary folder holding the workspace, code-server's state and the script. */
  work: string;
  /** The copy of the fixture workspace the window has open (with `roots`: the first). */
  workspace: string;
  /** Every copy of the fixture the window has open, in the window's order. */
  roots: string[];
  /** The `.code-workspace` file the window has open, with `roots`; else undefined. */
  workspaceFile: string | undefined;
  /** Where the fake provider records each request it answers (JSON lines; empty without one). */
  record: string;
  /** Where the scripted language model records each request (JSON lines; with `editorModelScript`). */
  lmRecord: string;
  /** Where the logs of this session's processes go. */
  logDir: string;
  server: CodeServer;
  browser: Browser;
  page: Page;
}

/** Starts everything and waits for the workbench to show the workspace. */
export async function openSession(options: SessionOptions): Promise<Session> {
  const env = e2eEnv();
  const logDir = path.join(env.outDir, options.name);
  mkdirSync(logDir, { recursive: true });
  const work = mkdtempSync(path.join(os.tmpdir(), 'copilot-vscode-e2e-'));
  const roots = (options.roots ?? ['tollbooth']).map((name) => path.join(work, name));
  for (const root of roots) {
    cpSync(env.fixture, root, { recursive: true });
  }
  const workspace = roots[0];
  // Several roots: a workspace file beside them lists each folder by its absolute path.
  const workspaceFile = options.roots ? path.join(work, 'e2e.code-workspace') : undefined;
  if (workspaceFile) {
    writeWorkspaceFile(workspaceFile, roots);
  }
  const record = path.join(logDir, 'provider-requests.jsonl');
  writeFileSync(record, '');
  let serverSettings: object = {};
  const lmRecord = path.join(logDir, 'editor-model-requests.jsonl');
  let extras: CodeServerExtras = {};
  if (options.editorModelScript) {
    const vsix = process.env.LM_PROVIDER_VSIX;
    if (!vsix || !existsSync(vsix)) {
      throw new Error(`LM_PROVIDER_VSIX=${vsix} does not exist (run editors/vscode/test/run.sh)`);
    }
    const script = path.join(work, 'lm-script.json');
    writeFileSync(script, JSON.stringify({ conversations: options.editorModelScript }, null, 2));
    writeFileSync(lmRecord, '');
    extras = { vsixes: [vsix], env: { LM_PROVIDER_SCRIPT: script, LM_PROVIDER_RECORD: lmRecord } };
    serverSettings = { 'copilot-ls.server.path': env.copilotLs, 'copilot-ls.requestTimeoutSecs': 30 };
  }
  if (options.script) {
    const script = path.join(work, 'script.json');
    writeFileSync(script, JSON.stringify(options.script, null, 2));
    const port = await startFakeProvider(env.fakeProvider, script, record, logDir);
    serverSettings = {
      'copilot-ls.server.path': env.copilotLs,
      'copilot-ls.provider': 'openai',
      'copilot-ls.baseUrl': `http://127.0.0.1:${port}/v1`,
      'copilot-ls.model': 'fake',
      'copilot-ls.requestTimeoutSecs': 30,
    };
  }

  const server = await startCodeServer(
    env,
    path.join(work, 'home'),
    workspaceFile ?? workspace,
    {
      ...serverSettings,
      'copilot-ls.trace.server': 'verbose',
      'workbench.startupEditor': 'none',
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'chat.disableAIFeatures': true,
      'telemetry.telemetryLevel': 'off',
      'security.workspace.trust.enabled': false,
      'git.enabled': false,
      'extensions.ignoreRecommendations': true,
      'editor.minimap.enabled': false,
      // An edit must reach the disk only when a test saves it.
      'files.autoSave': 'off',
      ...options.settings,
    },
    logDir,
    options.vsix ?? env.vsix,
    extras,
  );
  const browser = await launchBrowser(env);
  const page = await browser.newPage({ viewport: options.viewport });
  page.setDefaultTimeout(30_000);
  const query = workspaceFile ? `workspace=${encodeURIComponent(workspaceFile)}` : `folder=${encodeURIComponent(workspace)}`;
  await page.goto(`${server.url}/?${query}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
  // The explorer shows the workspace once the workbench has restored: a folder's files,
  // or each root of a workspace file by its name.
  for (const shown of workspaceFile ? roots.map((r) => path.basename(r)) : ['src']) {
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: shown }).first().waitFor({ timeout: 90_000 });
  }
  return { env, work, workspace, roots, workspaceFile, record, lmRecord, logDir, server, browser, page };
}

/**
 * Writes a `.code-workspace` listing `folders`; rewritten while the window is open, it
 * adds and removes the window's folders as File > Add Folder to Workspace would.
 */
export function writeWorkspaceFile(file: string, folders: string[]): void {
  writeFileSync(file, JSON.stringify({ folders: folders.map((f) => ({ path: f })), settings: {} }, null, 2));
}

/** Takes the last screenshot, stops everything and keeps the extension's own log. */
export async function closeSession(session: Session | undefined): Promise<void> {
  if (!session) {
    stopAll();
    return;
  }
  await session.page.screenshot({ path: path.join(session.logDir, 'final.png') }).catch(() => undefined);
  await session.browser.close().catch(() => undefined);
  stopAll();
  // The extension's log (it includes the server's stderr) goes next to the rest.
  const logs = path.join(session.work, 'home', 'user-data', 'logs');
  try {
    const found = readdirSync(logs, { recursive: true, encoding: 'utf8' }).filter((f) => path.basename(path.dirname(f)) === 'copilot-ls.copilot-ls');
    for (const f of found) {
      cpSync(path.join(logs, f), path.join(session.logDir, `extension-${path.basename(f)}`));
    }
  } catch {
    // No logs: the window never started.
  }
  rmSync(session.work, { recursive: true, force: true });
}

/** The extension's log so far (its output channel, as VS Code writes it to disk). */
export function extensionLog(session: Session): string {
  return extensionLogIn(path.join(session.work, 'home', 'user-data'));
}

/** The requests the fake provider has answered so far. */
export function requests(session: Session) {
  return readRequests(session.record);
}

/** A screenshot of a fixed flow, kept in test-output with the run's other output. */
export async function screenshot(session: Session, name: string): Promise<void> {
  await session.page.screenshot({ path: path.join(session.env.outDir, `${name}.png`) });
}

/** How much of the extension's log a failed step prints. */
const FAILURE_LOG_LINES = 60;

/**
 * `it` for the session `current()` returns, plus a screenshot of the window and the
 * extension log's tail when the step fails.
 */
export function stepsOf(current: () => Session | undefined): (name: string, fn: () => Promise<void>) => void {
  return (name, fn) => {
    it(name, async () => {
      try {
        await fn();
      } catch (err) {
        const session = current();
        if (session) {
          const slug = name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
          await session.page.screenshot({ path: path.join(session.env.outDir, `failed-${slug}.png`) }).catch(() => undefined);
          // CI keeps only what is printed: the extension's last lines say what it did.
          let tail: string;
          try {
            tail = extensionLog(session).split('\n').slice(-FAILURE_LOG_LINES).join('\n');
          } catch {
            tail = '(no extension log)';
          }
          console.error(`--- the extension's log before "${name}" failed:\n${tail}\n---`);
        }
        throw err;
      }
    });
  };
}

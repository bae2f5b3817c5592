// The palette commands: Ask, Ask About Selection, Follow Up, Clear Answers, Show Last
// Answer, Go to Citation, Restart Server.

import * as vscode from 'vscode';
import type { Location } from './answer_markdown';
import type { AnswerStore } from './answer_store';
import type { AnswerView } from './answer_view';
import { buildAskParams, DEFAULT_SELECTION_QUESTION, type EditorContext } from './ask_params';
import { OPEN_CITATION_COMMAND, pickCitation } from './citations_tree';
import type { CopilotClient } from './client';
import { showAskError } from './error_notification';
import { openLocation } from './open_location';
import { withAskProgress } from './progress';
import { shortQuestion } from './progress_report';
import type { StatusItem } from './status';

export interface CommandDeps {
  client: CopilotClient;
  store: AnswerStore;
  view: AnswerView;
  log: vscode.LogOutputChannel;
  status: StatusItem;
}

type AskMode = 'ask' | 'selection' | 'followUp';

function editorContext(client: CopilotClient, editor: vscode.TextEditor | undefined): EditorContext | undefined {
  if (!editor) {
    return undefined;
  }
  return {
    uri: client.uriToServer(editor.document.uri),
    scheme: editor.document.uri.scheme,
    selection: client.rangeToServer(editor.selection),
  };
}

async function promptQuestion(mode: AskMode, store: AnswerStore): Promise<string | undefined> {
  const last = store.current?.question;
  const title =
    mode === 'selection'
      ? 'Copilot: Ask About Selection'
      : mode === 'followUp' && last
        ? `Copilot: Follow Up on "${shortQuestion(last, 50)}"`
        : 'Copilot: Ask';
  const answer = await vscode.window.showInputBox({
    title,
    prompt: mode === 'selection' ? 'Question about the selected code (Enter alone: explain it)' : 'Question about this codebase',
    placeHolder: mode === 'selection' ? DEFAULT_SELECTION_QUESTION : 'How does the rate limiter refill its tokens?',
    ignoreFocusOut: true,
  });
  if (answer === undefined) {
    return undefined;
  }
  if (answer.trim() === '') {
    return mode === 'selection' ? DEFAULT_SELECTION_QUESTION : undefined;
  }
  return answer;
}

async function ask(deps: CommandDeps, mode: AskMode): Promise<void> {
  const { client, store, view, log, status } = deps;
  // Read the editor before the input box takes focus.
  const editor = vscode.window.activeTextEditor;
  if (mode === 'selection' && (!editor || editor.selection.isEmpty)) {
    void vscode.window.showWarningMessage('Copilot: select some code first, then run "Ask About Selection".');
    return;
  }
  const conversationId = mode === 'followUp' ? store.conversationId : undefined;
  if (mode === 'followUp' && !conversationId) {
    void vscode.window.showInformationMessage('Copilot: no earlier answer to follow up on; this starts a new conversation.');
  }
  const question = await promptQuestion(mode, store);
  if (question === undefined) {
    return;
  }
  status.set({ state: 'asking', question: shortQuestion(question) });
  try {
    await withAskProgress(question, async (progress) => {
      const params = buildAskParams({
        question,
        conversationId,
        editor: editorContext(client, editor),
        workDoneToken: progress.workDoneToken,
      });
      if (!params) {
        return;
      }
      log.info(`ask: ${JSON.stringify({ ...params, question: shortQuestion(params.question) })}`);
      const result = await client.ask(params, progress.token, progress.onProgress);
      log.info(`answer: ${result.stopReason}, ${result.citations.length} citations, ${result.edits.length} edits, ${result.steps.length} steps`);
      store.set(question, result);
      view.show(store.current);
    });
  } catch (err) {
    // Not awaited: the notification waits for a click, the status should not.
    void showAskError(err, log);
  } finally {
    status.idle();
  }
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { client, store, view, log } = deps;
  return [
    vscode.commands.registerCommand('copilot.askQuestion', () => ask(deps, 'ask')),
    vscode.commands.registerCommand('copilot.askAboutSelection', () => ask(deps, 'selection')),
    vscode.commands.registerCommand('copilot.followUp', () => ask(deps, 'followUp')),
    vscode.commands.registerCommand('copilot.clearAnswers', async () => {
      store.clear();
      view.clear();
      try {
        await client.clear();
      } catch (err) {
        log.error(`copilot.clear failed: ${String(err)}`);
      }
    }),
    vscode.commands.registerCommand('copilot.showLastAnswer', () => {
      if (!store.current) {
        void vscode.window.showInformationMessage('Copilot: no answer yet. Run "Copilot: Ask" first.');
      }
      view.show(store.current, false);
    }),
    vscode.commands.registerCommand('copilot.goToCitation', async () => {
      const location = await pickCitation(store);
      if (location) {
        await openLocation(location);
      }
    }),
    vscode.commands.registerCommand(OPEN_CITATION_COMMAND, (location: Location) => openLocation(location)),
    vscode.commands.registerCommand('copilot.restartServer', async () => {
      if (await client.restart()) {
        void vscode.window.showInformationMessage('Copilot: server restarted.');
      }
    }),
  ];
}

// The palette commands: Ask, Ask About Selection, Follow Up, Clear Answers, Show Last
// Answer, Go to Citation, Restart Server, Check Setup, Choose Model; the Chat view's
// Apply buttons; and the questions typed into the thread.

import * as vscode from 'vscode';
import type { Location } from './answer_markdown';
import type { AnswerStore } from './answer_store';
import { APPLY_SUGGESTED_EDIT_COMMAND, applySuggestedEdit } from './apply_edit';
import { ASK_PLACEHOLDER, DEFAULT_SELECTION_QUESTION, type EditorContext } from './ask_params';
import { runAsk, type AskDeps } from './ask_flow';
import { CheckSetup } from './check_setup';
import { chooseModel } from './choose_model';
import { OPEN_CITATION_COMMAND, pickCitation } from './citations_tree';
import type { CopilotClient } from './client';
import type { EditorModels } from './editor_models';
import { openLocation } from './open_location';
import { OLD_COMMAND_IDS } from './command_ids';
import { shortQuestion } from './progress_report';
import type { SuggestedEdit } from './protocol';

export type CommandDeps = AskDeps & { editorModels: EditorModels };

type AskMode = 'ask' | 'selection' | 'followUp';

/** The last text editor the user was in: the answer view taking focus must not lose it. */
class LastEditor implements vscode.Disposable {
  private editor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly sub = vscode.window.onDidChangeActiveTextEditor((e) => {
    if (e) {
      this.editor = e;
    }
  });

  get current(): vscode.TextEditor | undefined {
    const active = vscode.window.activeTextEditor;
    if (active) {
      return active;
    }
    // Still open? A closed editor's document is no context.
    return this.editor && vscode.window.visibleTextEditors.includes(this.editor) ? this.editor : undefined;
  }

  dispose(): void {
    this.sub.dispose();
  }
}

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
  const last = store.thread.exchanges[store.thread.exchanges.length - 1]?.question;
  const title =
    mode === 'selection'
      ? 'copilot-ls: Ask About Selection'
      : mode === 'followUp' && last
        ? `copilot-ls: Follow Up on "${shortQuestion(last, 50)}"`
        : 'copilot-ls: Ask';
  const answer = await vscode.window.showInputBox({
    title,
    prompt: mode === 'selection' ? 'Question about the selected code (Enter alone: explain it)' : 'Question about this codebase',
    placeHolder: mode === 'selection' ? DEFAULT_SELECTION_QUESTION : ASK_PLACEHOLDER,
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

async function ask(deps: CommandDeps, editors: LastEditor, mode: AskMode): Promise<void> {
  const { client, store } = deps;
  // Read the editor before the input box takes focus.
  const editor = editors.current;
  if (mode === 'selection' && (!editor || editor.selection.isEmpty)) {
    void vscode.window.showWarningMessage('copilot-ls: select some code first, then run "Ask About Selection".');
    return;
  }
  if (mode === 'followUp' && store.thread.exchanges.length === 0) {
    void vscode.window.showInformationMessage('copilot-ls: no earlier answer to follow up on; this starts a new conversation.');
  }
  const question = await promptQuestion(mode, store);
  if (question === undefined) {
    return;
  }
  // Ask and Ask About Selection start a new conversation; Follow Up continues the thread.
  const thread = mode === 'followUp' ? store.thread : store.newThread();
  await runAsk(deps, thread, question, editorContext(client, editor));
}


export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { client, store, view, log } = deps;
  const editors = new LastEditor();
  const setup = new CheckSetup(client);
  const handlers: Record<string, (...args: never[]) => unknown> = {
    'copilot-ls.ask': () => ask(deps, editors, 'ask'),
    'copilot-ls.askAboutSelection': () => ask(deps, editors, 'selection'),
    'copilot-ls.followUp': () => ask(deps, editors, 'followUp'),
    'copilot-ls.clearAnswers': async () => {
      store.clear();
      try {
        await client.clear();
      } catch (err) {
        log.error(`copilot.clear failed: ${String(err)}`);
      }
    },
    // An empty thread says there is no answer yet: a notification would cover it.
    'copilot-ls.showLastAnswer': () => view.show(false),
    'copilot-ls.goToCitation': async () => {
      const location = await pickCitation(store);
      if (location) {
        await openLocation(location);
      }
    },
    [OPEN_CITATION_COMMAND]: (location: Location) => openLocation(location),
    'copilot-ls.restartServer': async () => {
      // restart() resolves the binary again, so a changed copilot-ls.server.path is used.
      if (await client.restart()) {
        void vscode.window.showInformationMessage('copilot-ls: server restarted.');
      }
    },
    'copilot-ls.checkSetup': () => setup.run(),
    'copilot-ls.chooseModel': () => chooseModel(deps.editorModels),
    // The Chat view's Apply links: the thread's own apply path.
    [APPLY_SUGGESTED_EDIT_COMMAND]: (edit: SuggestedEdit) => applySuggestedEdit(edit, log),
  };
  return [
    editors,
    setup,
    // A question typed into the thread's input box continues that thread.
    view.onAsk((question) => void runAsk(deps, store.thread, question, editorContext(client, editors.current))),
    ...Object.entries(handlers).map(([id, handler]) => vscode.commands.registerCommand(id, handler)),
    ...Object.entries(OLD_COMMAND_IDS).map(([old, id]) => vscode.commands.registerCommand(old, handlers[id])),
  ];
}

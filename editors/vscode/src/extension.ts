// Activation: creates the pieces and wires them together; each lives in its own file.

import * as vscode from 'vscode';
import { AnswerStore } from './answer_store';
import { AnswerView } from './answer_view';
import { EditorModelAnswers } from './answered_by';
import { registerChatParticipant } from './chat_participant';
import { createCitationsTree } from './citations_tree';
import { CopilotClient } from './client';
import { registerCommands } from './commands';
import { EditorModels } from './editor_models';
import { followDiagnostics, normalizeUri } from './live_diagnostics';
import { ModelBridge } from './model_bridge';
import { StatusItem } from './status';

let client: CopilotClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('copilot-ls', { log: true });
  const store = new AnswerStore(normalizeUri);
  const view = new AnswerView(store, log);
  const status = new StatusItem();
  const editorModels = new EditorModels(log);
  const bridge = new ModelBridge(editorModels, log);
  const answers = new EditorModelAnswers(bridge, context.globalState);
  client = new CopilotClient(context, log, status, editorModels, bridge);
  const chat = registerChatParticipant({ client, log, answers });

  context.subscriptions.push(
    log,
    status,
    view,
    editorModels,
    client,
    ...(chat ? [chat] : []),
    followDiagnostics(store),
    createCitationsTree(store),
    ...registerCommands({ client, store, view, log, status, answers, editorModels }),
  );

  // Commands are registered first so the palette works even when the server is missing;
  // a missing binary is reported by start() and retried on the next ask.
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}

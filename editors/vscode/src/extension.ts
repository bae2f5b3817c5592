// Activation: creates the pieces and wires them together; each lives in its own file.

import * as vscode from 'vscode';
import { AnswerStore } from './answer_store';
import { AnswerView } from './answer_view';
import { createCitationsTree } from './citations_tree';
import { CopilotClient } from './client';
import { registerCommands } from './commands';
import { followDiagnostics, normalizeUri } from './live_diagnostics';
import { StatusItem } from './status';

let client: CopilotClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('copilot-ls', { log: true });
  const store = new AnswerStore(normalizeUri);
  const view = new AnswerView(store, log);
  const status = new StatusItem();
  client = new CopilotClient(context, log, status);

  context.subscriptions.push(
    log,
    status,
    view,
    client,
    followDiagnostics(store),
    createCitationsTree(store),
    ...registerCommands({ client, store, view, log, status }),
  );

  // Commands are registered first so the palette works even when the server is missing;
  // a missing binary is reported by start() and retried on the next ask.
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}

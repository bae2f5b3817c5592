// "copilot-ls: Choose Model": a quick pick of the editor's language models (name, vendor
// and family), writing the chosen id to `copilot-ls.editorModel`, which the server reads
// as `editorModel` (PROTOCOL.md section 11).

import * as vscode from 'vscode';
import type { EditorModels } from './editor_models';
import { SECTION } from './settings';

export async function chooseModel(models: EditorModels): Promise<void> {
  if (!models.supported) {
    void vscode.window.showWarningMessage(
      'copilot-ls: this VS Code has no language model API with tool calling (VS Code 1.95 or newer has it); set copilot-ls.provider to openai or anthropic instead.',
    );
    return;
  }
  const listed = await models.list();
  if (listed.length === 0) {
    void vscode.window.showWarningMessage(
      'copilot-ls: the editor lists no language model. Install or sign in to an extension that provides one (GitHub Copilot, for one), or set copilot-ls.provider to openai or anthropic.',
    );
    return;
  }
  const config = vscode.workspace.getConfiguration(SECTION);
  const current = config.get<string>('editorModel') ?? '';
  const items = listed.map((m) => ({
    label: m.name,
    description: `${m.vendor} · ${m.family}`,
    detail: `${m.id}${m.maxInputTokens > 0 ? ` · ${m.maxInputTokens.toLocaleString('en-US')} input tokens` : ''}`,
    picked: m.id === current,
    id: m.id,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'copilot-ls: Choose Model',
    placeHolder: current ? `The editor's model copilot-ls uses (now ${current})` : "The editor's model copilot-ls uses",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) {
    return;
  }
  await config.update('editorModel', picked.id, vscode.ConfigurationTarget.Global);
  void vscode.window.showInformationMessage(`copilot-ls: answers use ${picked.label} (${picked.description}) when the provider is the editor's model.`);
}

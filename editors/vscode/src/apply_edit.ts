// Applying a suggested edit from the thread exactly as its quick fix would: the server's
// current code action for it (which follows the edit's text as the document changes)
// carries the WorkspaceEdit, and VS Code shows it in the Refactor Preview first, where
// the user ticks and applies it.

import * as vscode from 'vscode';
import type { SuggestedEdit } from './protocol';
import { ourDiagnostics } from './live_diagnostics';

export async function applySuggestedEdit(edit: SuggestedEdit, log: vscode.LogOutputChannel): Promise<void> {
  const uri = vscode.Uri.parse(edit.uri);
  const diagnostic = ourDiagnostics(uri).find((d) => d.code === 'suggested-edit' && d.editId === edit.id);
  if (!diagnostic) {
    void vscode.window.showInformationMessage(`copilot-ls: "${edit.title}" no longer applies (it was applied, or its text has changed).`);
    return;
  }
  const line = new vscode.Range(diagnostic.line, 0, diagnostic.line, 0);
  const actions =
    (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, line, vscode.CodeActionKind.QuickFix.value)) ?? [];
  // The server titles its quick fix "<prefix>: <edit title>" and attaches the edit's
  // diagnostic; either identifies it among other extensions' actions.
  const action = actions.find(
    (a) =>
      a.edit &&
      (a.diagnostics?.some((d) => (d as { data?: { editId?: unknown } }).data?.editId === edit.id) || a.title.endsWith(`: ${edit.title}`)),
  );
  if (!action?.edit) {
    log.warn(`no code action for suggested edit ${edit.id} at ${uri.toString()}:${diagnostic.line + 1}`);
    void vscode.window.showInformationMessage(`copilot-ls: the server no longer offers "${edit.title}".`);
    return;
  }
  log.info(`applying suggested edit ${edit.id} (${edit.title}) through the refactor preview`);
  const applied = await vscode.workspace.applyEdit(await needingConfirmation(action.edit, edit.title), { isRefactoring: true });
  log.info(`suggested edit ${edit.id}: ${applied ? 'applied' : 'not applied'}`);
}

/**
 * The same edit with every entry marked needsConfirmation, which makes VS Code open the
 * Refactor Preview. The server marks them so, but the code action's edit reaches an
 * extension without its entry metadata, and applied as it is it would skip the preview.
 */
async function needingConfirmation(source: vscode.WorkspaceEdit, title: string): Promise<vscode.WorkspaceEdit> {
  const metadata: vscode.WorkspaceEditEntryMetadata = { needsConfirmation: true, label: `copilot-ls: ${title}` };
  const edit = new vscode.WorkspaceEdit();
  for (const [uri, textEdits] of source.entries()) {
    // A suggested edit may create its file (an empty old_text); entries() lists only text.
    const exists = await vscode.workspace.fs.stat(uri).then(
      () => true,
      () => false,
    );
    if (!exists) {
      edit.createFile(uri, { ignoreIfExists: true }, metadata);
    }
    for (const t of textEdits) {
      edit.replace(uri, t.range, t.newText, metadata);
    }
  }
  return edit;
}

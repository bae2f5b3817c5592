// Applying a suggested edit from the thread exactly as its quick fix would: the server's
// current code action for it (which follows the edit's text as the document changes)
// carries the WorkspaceEdit, and VS Code shows it in the Refactor Preview first, the
// change ticked (edit_preview.ts), where the user reviews and applies it.

import * as vscode from 'vscode';
import { APPLY_SUGGESTED_EDIT_COMMAND_ID } from './command_ids';
import { forPreview } from './edit_preview';
import { ourDiagnostics } from './live_diagnostics';
import type { SuggestedEdit } from './protocol';

/** The command the Chat view's Apply links run (with the SuggestedEdit): this same path. */
export const APPLY_SUGGESTED_EDIT_COMMAND = APPLY_SUGGESTED_EDIT_COMMAND_ID;

/** How an Apply ended, in words for the thread and the log. */
export type ApplyOutcome = 'applied' | 'not applied' | 'no longer offered' | 'failed';

export async function applySuggestedEdit(edit: SuggestedEdit, log: vscode.LogOutputChannel): Promise<ApplyOutcome> {
  try {
    return await apply(edit, log);
  } catch (err) {
    log.error(`applying suggested edit ${edit.id} (${edit.title}) failed: ${String(err)}`);
    void vscode.window.showErrorMessage(`copilot-ls: "${edit.title}" could not be applied: ${String(err)}`);
    return 'failed';
  }
}

async function apply(edit: SuggestedEdit, log: vscode.LogOutputChannel): Promise<ApplyOutcome> {
  const uri = vscode.Uri.parse(edit.uri);
  const diagnostic = ourDiagnostics(uri).find((d) => d.code === 'suggested-edit' && d.editId === edit.id);
  if (!diagnostic) {
    void vscode.window.showInformationMessage(`copilot-ls: "${edit.title}" no longer applies (it was applied, or its text has changed).`);
    return 'no longer offered';
  }
  // VS Code computes code actions only for a document it has loaded ("Illegal argument"
  // otherwise); opening it also gives the server its text, as for an edited file.
  await vscode.workspace.openTextDocument(uri);
  const range = new vscode.Range(diagnostic.line, 0, diagnostic.line, 0);
  // The quick fix is titled "<prefix>: <edit title>" and carries the edit's diagnostic;
  // either identifies it among other extensions' actions.
  const ours = (a: vscode.CodeAction) =>
    a.edit !== undefined &&
    (a.diagnostics?.some((d) => (d as { data?: { editId?: unknown } }).data?.editId === edit.id) || a.title.endsWith(`: ${edit.title}`));
  let action = (await quickFixes(uri, range)).find(ours);
  // A document opened just now may not have reached the language client yet, and VS Code
  // then asks no server for its actions (seen once in CI: none for a file not open). The
  // question is asked again for a short while before the edit counts as withdrawn.
  for (let attempt = 1; !action && attempt < OPENED_ATTEMPTS; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, OPENED_RETRY_MS));
    action = (await quickFixes(uri, range)).find(ours);
    if (action) {
      log.info(`suggested edit ${edit.id}: its code action came on attempt ${attempt + 1}`);
    }
  }
  if (!action?.edit) {
    log.warn(`no code action for suggested edit ${edit.id} at ${uri.toString()}:${diagnostic.line + 1}`);
    void vscode.window.showInformationMessage(`copilot-ls: the server no longer offers "${edit.title}".`);
    return 'no longer offered';
  }
  log.info(`applying suggested edit ${edit.id} (${edit.title}) through the refactor preview`);
  // The code action reaches an extension without its entries' metadata: applied as it is,
  // it would skip the preview. Rebuilt, it opens the preview with the change ticked.
  const applied = await vscode.workspace.applyEdit(await forPreview(action.edit, edit.title, action.isPreferred !== false), { isRefactoring: true });
  log.info(`suggested edit ${edit.id}: ${applied ? 'applied' : 'not applied'}`);
  return applied ? 'applied' : 'not applied';
}

/** Times, and the wait between them, the quick fixes of a document just opened are asked for. */
const OPENED_ATTEMPTS = 10;
const OPENED_RETRY_MS = 200;

/** Times the quick fixes are asked for when VS Code cancels the computation. */
const CODE_ACTION_ATTEMPTS = 3;

/**
 * The quick fixes at `range`. VS Code cancels a code action computation when the
 * document's content changes under it ("Canceled"), as a document just opened can while
 * it loads: asked again then, since nothing the user did cancelled it.
 */
async function quickFixes(uri: vscode.Uri, range: vscode.Range): Promise<vscode.CodeAction[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, range, vscode.CodeActionKind.QuickFix.value)) ?? [];
    } catch (err) {
      const cancelled = err instanceof Error && err.name === 'Canceled';
      if (!cancelled || attempt >= CODE_ACTION_ATTEMPTS) {
        throw err;
      }
    }
  }
}

// A suggested edit as VS Code's Refactor Preview should show it: opened for review, with
// the change already ticked, so pressing Apply there applies it.
//
// VS Code opens the preview only when an entry of the edit needs confirmation, and starts
// every such entry unticked; the user then had to find and tick the checkbox, and Apply
// right away did nothing. So the change itself is not marked, and one more entry is: a
// "create" of the workspace folder that exists, with `ignoreIfExists`. It opens the
// preview, the preview lists no ignored create (and it starts unticked, so it is dropped
// from what is applied), and applied anyway it would change nothing. An edit the server
// did not mark preferred (one to tool or CI configuration) stays unticked: those are
// applied only when the user ticks them.
//
// The folder created is the edited file's own, also in a window of several folders; since
// the create is neither listed nor applied, any folder of the window would do, and the
// first is taken for a file outside all of them.

import * as vscode from 'vscode';

export async function forPreview(source: vscode.WorkspaceEdit, title: string, preselect: boolean): Promise<vscode.WorkspaceEdit> {
  const label = `copilot-ls: ${title}`;
  const change: vscode.WorkspaceEditEntryMetadata = { needsConfirmation: !preselect, label };
  const edit = new vscode.WorkspaceEdit();
  let folder: vscode.Uri | undefined;
  for (const [uri, textEdits] of source.entries()) {
    folder ??= vscode.workspace.getWorkspaceFolder(uri)?.uri;
    // A suggested edit may create its file (an empty old_text); entries() lists only text.
    const exists = await vscode.workspace.fs.stat(uri).then(
      () => true,
      () => false,
    );
    if (!exists) {
      edit.createFile(uri, { ignoreIfExists: true }, change);
    }
    for (const t of textEdits) {
      edit.replace(uri, t.range, t.newText, change);
    }
  }
  folder ??= vscode.workspace.workspaceFolders?.[0]?.uri;
  if (preselect && folder) {
    edit.createFile(folder, { ignoreIfExists: true }, { needsConfirmation: true, label });
  }
  return edit;
}

// Opening a cited place in an editor, with the cited lines selected.

import * as vscode from 'vscode';
import type { Location } from './answer_markdown';

export async function openLocation(loc: Location, viewColumn?: vscode.ViewColumn): Promise<void> {
  const start = new vscode.Position(loc.line - 1, 0);
  try {
    const editor = await vscode.window.showTextDocument(vscode.Uri.parse(loc.uri), {
      viewColumn: viewColumn ?? vscode.ViewColumn.One,
      preserveFocus: false,
      selection: new vscode.Range(start, start),
    });
    // Reveal the whole cited block, not just its first line.
    const end = new vscode.Position(Math.max(loc.endLine - 1, loc.line - 1), 0);
    editor.revealRange(new vscode.Range(start, end), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  } catch (err) {
    void vscode.window.showErrorMessage(`copilot-ls: cannot open ${vscode.Uri.parse(loc.uri).fsPath}: ${String(err)}`);
  }
}

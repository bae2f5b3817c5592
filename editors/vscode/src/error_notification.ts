// Showing a failed ask as an error notification whose button opens the setting to fix
// (when the thread, which shows the same with the same buttons, is out of view).

import * as vscode from 'vscode';
import { describeAskError } from './errors';

export async function showAskError(err: unknown): Promise<void> {
  const report = describeAskError(err);
  if (report.kind === 'silent') {
    return;
  }
  const picked = await vscode.window.showErrorMessage(report.message, ...report.actions.map((a) => a.label));
  const action = report.actions.find((a) => a.label === picked);
  if (action) {
    await vscode.commands.executeCommand(action.command, ...action.args);
  }
}

// Showing a failed ask as an error notification whose button opens the setting to fix.

import * as vscode from 'vscode';
import { describeAskError } from './errors';

export async function showAskError(err: unknown, log: vscode.LogOutputChannel): Promise<void> {
  const report = describeAskError(err);
  if (report.kind === 'silent') {
    log.info('ask cancelled');
    return;
  }
  log.error(report.message);
  const picked = await vscode.window.showErrorMessage(report.message, ...report.actions.map((a) => a.label));
  const action = report.actions.find((a) => a.label === picked);
  if (action) {
    await vscode.commands.executeCommand(action.command, ...action.args);
  }
}

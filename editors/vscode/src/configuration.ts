// Reading the user's copilot.* settings for the server and following their changes.

import * as vscode from 'vscode';
import { SERVER_SETTING_KEYS, serverSettings, settingsChange, type ServerSettings, type SettingsChange } from './settings';

export function currentServerSettings(): ServerSettings {
  const config = vscode.workspace.getConfiguration('copilot');
  return serverSettings((key) => config.inspect(key));
}

/**
 * Calls `onChange` with what to do whenever a setting the server reads changes, and
 * `onServerPathChange` when copilot.server.path does (that always needs a new process).
 */
export function watchSettings(
  initial: ServerSettings,
  onChange: (change: SettingsChange) => void,
  onServerPathChange: () => void,
): vscode.Disposable {
  let previous = initial;
  return vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('copilot.server.path')) {
      onServerPathChange();
      return;
    }
    if (!SERVER_SETTING_KEYS.some((k) => e.affectsConfiguration(`copilot.${k}`))) {
      return;
    }
    const next = currentServerSettings();
    const change = settingsChange(previous, next);
    previous = next;
    onChange(change);
  });
}

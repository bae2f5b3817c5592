// Reading the user's copilot-ls.* settings (and the older copilot.* names) for the server,
// following their changes, and saying once when an old name is still in use.

import * as vscode from 'vscode';
import {
  OLD_SECTION,
  SECTION,
  SERVER_SETTING_KEYS,
  deprecationNote,
  serverSettings,
  settingValue,
  settingsChange,
  type ServerSettings,
  type SettingsChange,
} from './settings';

/** Old keys the user still has, collected as they are read; noted once per key. */
const legacyInUse = new Set<string>();
const legacyNoted = new Set<string>();

function inspectors() {
  const config = vscode.workspace.getConfiguration(SECTION);
  const old = vscode.workspace.getConfiguration(OLD_SECTION);
  return { inspect: (key: string) => config.inspect(key), inspectOld: (key: string) => old.inspect(key) };
}

export function currentServerSettings(): ServerSettings {
  const { inspect, inspectOld } = inspectors();
  return serverSettings(inspect, inspectOld, legacyInUse);
}

/** `copilot-ls.server.path`, else the old `copilot.server.path`. */
export function serverPathSetting(): string | undefined {
  const { inspect, inspectOld } = inspectors();
  const value = settingValue('server.path', inspect, inspectOld, legacyInUse);
  return typeof value === 'string' ? value : undefined;
}

/**
 * Tells the user (a warning, once per old key and window, and the log) which old
 * `copilot.*` settings are still read, with their new names. Settings that were renamed
 * are also marked deprecated in the Settings UI and in settings.json.
 */
export function noteDeprecatedSettings(log: vscode.LogOutputChannel): void {
  const fresh = [...legacyInUse].filter((k) => !legacyNoted.has(k));
  const note = deprecationNote(fresh);
  if (!note) {
    return;
  }
  for (const k of fresh) {
    legacyNoted.add(k);
  }
  log.warn(note);
  void vscode.window.showWarningMessage(note, 'Open Settings').then((picked) => {
    if (picked) {
      void vscode.commands.executeCommand('workbench.action.openSettings', `${OLD_SECTION}.`);
    }
  });
}

function affects(e: vscode.ConfigurationChangeEvent, key: string): boolean {
  return e.affectsConfiguration(`${SECTION}.${key}`) || e.affectsConfiguration(`${OLD_SECTION}.${key}`);
}

/**
 * Calls `onChange` with what to do whenever a setting the server reads changes, and
 * `onServerPathChange` when copilot-ls.server.path does (that always needs a new process).
 */
export function watchSettings(
  initial: ServerSettings,
  onChange: (change: SettingsChange) => void,
  onServerPathChange: () => void,
): vscode.Disposable {
  let previous = initial;
  return vscode.workspace.onDidChangeConfiguration((e) => {
    if (affects(e, 'server.path')) {
      onServerPathChange();
      return;
    }
    if (!SERVER_SETTING_KEYS.some((k) => affects(e, k))) {
      return;
    }
    const next = currentServerSettings();
    const change = settingsChange(previous, next);
    previous = next;
    onChange(change);
  });
}

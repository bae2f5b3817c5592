// Finding the copilot-ls binary on this machine (the order lives in discovery.ts) and
// telling the user how to fix it when there is none.

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { serverPathSetting } from './configuration';
import { findServer, type ServerSource } from './discovery';
import { openSettingsAction } from './errors';

function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    if (process.platform !== 'win32') {
      fs.accessSync(file, fs.constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

export interface ServerBinary {
  path: string;
  source: ServerSource;
}

/** The binary to run, or the reason there is none (after a notification saying how to fix it). */
export function resolveServer(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): ServerBinary | { error: string } {
  const found = findServer({
    env: process.env,
    settingPath: serverPathSetting(),
    extensionPath: context.extensionPath,
    platform: process.platform,
    isExecutable,
  });
  if (found.ok) {
    log.info(`using copilot-ls at ${found.path} (from ${found.source})`);
    return { path: found.path, source: found.source };
  }
  log.error(found.message);
  const action = openSettingsAction('copilot-ls.server.path');
  void vscode.window.showErrorMessage(`copilot-ls: ${found.message}`, action.label).then((picked) => {
    if (picked === action.label) {
      void vscode.commands.executeCommand(action.command, ...action.args);
    }
  });
  return { error: found.message };
}

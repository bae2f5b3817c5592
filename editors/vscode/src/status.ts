// The "Copilot" status bar item: whether the server runs, and a click to ask or to fix it.

import * as vscode from 'vscode';

export type ServerStatus =
  | { state: 'starting' }
  | { state: 'running'; path: string; source: string }
  | { state: 'asking'; question: string }
  | { state: 'stopped'; reason: string };

export class StatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('copilot.status', vscode.StatusBarAlignment.Right, 100);
  // What to go back to when an ask ends: the last state that was not "asking".
  private resting: ServerStatus = { state: 'starting' };

  constructor() {
    this.item.name = 'Copilot';
    this.set({ state: 'starting' });
    this.item.show();
  }

  set(status: ServerStatus): void {
    if (status.state !== 'asking') {
      this.resting = status;
    }
    const item = this.item;
    item.backgroundColor = undefined;
    switch (status.state) {
      case 'starting':
        item.text = '$(loading~spin) Copilot';
        item.tooltip = 'Copilot: starting copilot-ls…';
        item.command = undefined;
        break;
      case 'running':
        item.text = '$(comment-discussion) Copilot';
        item.tooltip = `Copilot: copilot-ls is running (${status.path}, from ${status.source}). Click to ask a question.`;
        item.command = 'copilot.askQuestion';
        break;
      case 'asking':
        item.text = '$(loading~spin) Copilot';
        item.tooltip = `Copilot: working on "${status.question}"`;
        item.command = undefined;
        break;
      case 'stopped':
        item.text = '$(error) Copilot';
        item.tooltip = `Copilot: ${status.reason} Click to restart the server.`;
        item.command = 'copilot.restartServer';
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        break;
    }
  }

  /** Back to the server's state after an ask. */
  idle(): void {
    this.set(this.resting);
  }

  dispose(): void {
    this.item.dispose();
  }
}

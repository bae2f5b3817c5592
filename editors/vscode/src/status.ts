// The "copilot-ls" status bar item: whether the server runs, whether any ask is still
// running (and what it is doing), and a click to ask or to fix it.

import * as vscode from 'vscode';
import { AskActivity } from './ask_activity';

export type ServerStatus =
  | { state: 'starting' }
  | { state: 'running'; path: string; source: string }
  | { state: 'stopped'; reason: string };

export class StatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('copilot-ls.status', vscode.StatusBarAlignment.Right, 100);
  private server: ServerStatus = { state: 'starting' };
  /** Every running ask; the item is busy while there is at least one. */
  readonly asks = new AskActivity(() => this.render());

  constructor() {
    this.item.name = 'copilot-ls';
    this.render();
    this.item.show();
  }

  set(status: ServerStatus): void {
    this.server = status;
    this.render();
  }

  private render(): void {
    const item = this.item;
    const status = this.server;
    item.backgroundColor = undefined;
    if (this.asks.count > 0 && status.state === 'running') {
      const lines = this.asks.describe();
      item.text = this.asks.count > 1 ? `$(loading~spin) copilot-ls (${this.asks.count})` : '$(loading~spin) copilot-ls';
      item.tooltip = `copilot-ls: working on ${lines.join('; ')}`;
      item.command = 'copilot-ls.showLastAnswer';
      return;
    }
    switch (status.state) {
      case 'starting':
        item.text = '$(loading~spin) copilot-ls';
        item.tooltip = 'copilot-ls: starting the server…';
        item.command = undefined;
        break;
      case 'running':
        item.text = '$(comment-discussion) copilot-ls';
        item.tooltip = `copilot-ls: the server is running (${status.path}, from ${status.source}). Click to ask a question.`;
        item.command = 'copilot-ls.ask';
        break;
      case 'stopped':
        item.text = '$(error) copilot-ls';
        item.tooltip = `copilot-ls: ${status.reason} Click to restart the server.`;
        item.command = 'copilot-ls.restartServer';
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        break;
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}

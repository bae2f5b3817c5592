// The answer view: a webview panel that shows the rendered answer. Links are handled by
// the extension, not the webview, so citations open in an editor at the cited line.

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { classifyLink, renderAnswerHtml } from './answer_markdown';
import type { Answer } from './answer_store';
import { openLocation } from './open_location';

export class AnswerView implements vscode.Disposable {
  public static readonly viewType = 'copilot.answer';
  private panel: vscode.WebviewPanel | undefined;

  /** Shows `answer` (or an empty state), creating the panel beside the editor if needed. */
  show(answer: Answer | undefined, preserveFocus = true): void {
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        AnswerView.viewType,
        'Copilot Answer',
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
        // No local resources: everything the page needs is inlined.
        { enableScripts: true, enableFindWidget: true, localResourceRoots: [] },
      );
      this.panel.onDidDispose(() => {
        this.panel = undefined;
      });
      this.panel.webview.onDidReceiveMessage((msg: unknown) => this.onMessage(msg));
    } else {
      this.panel.reveal(undefined, preserveFocus);
    }
    this.panel.title = answer ? 'Copilot Answer' : 'Copilot';
    this.panel.webview.html = this.html(this.panel.webview, answer);
  }

  /** Empties the view if it is open; it stays where the user put it. */
  clear(): void {
    if (this.panel) {
      this.panel.webview.html = this.html(this.panel.webview, undefined);
    }
  }

  private onMessage(msg: unknown): void {
    const m = msg as { type?: unknown; href?: unknown };
    if (m.type !== 'open' || typeof m.href !== 'string') {
      return;
    }
    const target = classifyLink(m.href);
    if (target.kind === 'location') {
      // Open the file in the other column so the answer stays visible.
      const column = this.panel?.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
      void openLocation(target.location, column);
    } else if (target.kind === 'external') {
      void vscode.env.openExternal(vscode.Uri.parse(target.url));
    }
  }

  private html(webview: vscode.Webview, answer: Answer | undefined): string {
    const nonce = randomBytes(16).toString('base64');
    const body = answer
      ? renderAnswerHtml(answer.question, answer.result)
      : '<p class="empty">No answer. Run <b>Copilot: Ask</b> (Ctrl+Alt+/).</p>';
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource} 'unsafe-inline'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style>
  body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); line-height: 1.5; padding: 0 16px 16px; }
  a { color: var(--vscode-textLink-foreground); cursor: pointer; }
  a:hover { color: var(--vscode-textLink-activeForeground); }
  code { font-family: var(--vscode-editor-font-family); background: var(--vscode-textCodeBlock-background); padding: 0 3px; border-radius: 3px; }
  pre { background: var(--vscode-textCodeBlock-background); padding: 8px; overflow-x: auto; }
  pre code { padding: 0; }
  blockquote { margin: 0; padding: 2px 12px; border-left: 4px solid var(--vscode-textBlockQuote-border); background: var(--vscode-textBlockQuote-background); }
  h3 { border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 4px; }
  .empty { opacity: 0.7; }
</style>
</head>
<body>
<main id="answer">${body}</main>
<script nonce="${nonce}">
  const vscode = acquireVsCodeApi();
  // A press on a link must not focus the webview: the workbench hears of that focus
  // asynchronously and could take it back from the editor the link opens.
  document.addEventListener('mousedown', (event) => {
    if (event.target instanceof Element && event.target.closest('a[href]')) event.preventDefault();
  });
  document.addEventListener('click', (event) => {
    const link = event.target instanceof Element ? event.target.closest('a[href]') : null;
    if (!link) return;
    event.preventDefault();
    vscode.postMessage({ type: 'open', href: link.getAttribute('href') });
  });
</script>
</body>
</html>`;
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

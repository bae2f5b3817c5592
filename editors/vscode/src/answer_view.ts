// The answer view: a webview panel holding the conversation as a thread. Sections are
// rendered here (thread_render.ts) and posted whole as they change, so the streamed text
// shows as it arrives. Links, Copy, Apply and the questions typed at the bottom come back
// as messages and are handled by the extension, not the webview.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { classifyLink } from './answer_markdown';
import { answerPage, EMPTY_THREAD } from './answer_page';
import type { AnswerStore, StoreChange } from './answer_store';
import { applySuggestedEdit } from './apply_edit';
import { isApplied } from './edit_diff';
import { openLocation } from './open_location';
import type { Exchange } from './thread';
import { renderExchange } from './thread_render';

export class AnswerView implements vscode.Disposable {
  public static readonly viewType = 'copilot-ls.answer';
  private panel: vscode.WebviewPanel | undefined;
  private readonly asked = new vscode.EventEmitter<string>();
  /** Questions typed into the thread's input box. */
  readonly onAsk = this.asked.event;
  private readonly stops = new Map<Exchange, () => void>();
  private readonly subs: vscode.Disposable[] = [];
  private readonly visibility = new vscode.EventEmitter<boolean>();
  /** show() revealed the panel; VS Code says it is visible a moment later. */
  private revealed = false;
  /** Fires when the thread comes into view or leaves it (hidden behind a tab, closed). */
  readonly onDidChangeVisibility = this.visibility.event;

  constructor(
    private readonly store: AnswerStore,
    private readonly log: vscode.LogOutputChannel,
  ) {
    const sub = store.onDidChange((change) => this.update(change));
    this.subs.push({ dispose: () => sub.dispose() }, this.asked, this.visibility);
  }

  /** Whether the thread is on screen: then it, not a notification, shows an ask. */
  get visible(): boolean {
    return this.panel !== undefined && (this.panel.visible || this.revealed);
  }

  /** Calls `stop` when the user presses Stop while `exchange` runs. */
  onStop(exchange: Exchange, stop: () => void): vscode.Disposable {
    this.stops.set(exchange, stop);
    return { dispose: () => this.stops.delete(exchange) };
  }

  /** Shows the thread, creating the panel beside the editor if needed. */
  show(preserveFocus = true): void {
    this.revealed = true;
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return;
    }
    this.panel = vscode.window.createWebviewPanel(
      AnswerView.viewType,
      'copilot-ls',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
      // No local resources: everything the page needs is inlined. The thread is kept
      // while the tab is in the background so a long answer keeps streaming into it.
      { enableScripts: true, enableFindWidget: true, localResourceRoots: [], retainContextWhenHidden: true },
    );
    this.panel.onDidDispose(() => {
      this.panel = undefined;
      this.revealed = false;
      this.visibility.fire(false);
    });
    this.panel.onDidChangeViewState((e) => {
      this.revealed = false;
      this.visibility.fire(e.webviewPanel.visible);
    });
    this.panel.webview.onDidReceiveMessage((msg: unknown) => this.onMessage(msg));
    const nonce = randomBytes(16).toString('base64');
    this.panel.webview.html = answerPage({
      nonce,
      cspSource: this.panel.webview.cspSource,
      sections: this.store.thread.exchanges.map((e) => this.render(e)),
      running: this.store.thread.running,
    });
  }

  private render(exchange: Exchange): string {
    return renderExchange(exchange, {
      placements: this.store.positionsOf(exchange),
      editsApplicable: exchange === this.store.thread.lastAnswered,
      isApplied: (edit, texts) => {
        const text = documentText(edit.uri);
        return text !== undefined && isApplied(text, texts.oldText, texts.newText);
      },
    });
  }

  private update(change: StoreChange): void {
    const webview = this.panel?.webview;
    if (!webview) {
      return;
    }
    const running = this.store.thread.running;
    if (change.exchange) {
      const html = this.render(change.exchange);
      // arrivedAt/sentAt let the page measure a delta's way to the screen (and our share).
      void webview.postMessage({ type: 'exchange', id: change.exchange.id, html, running, arrivedAt: change.arrivedAt, sentAt: Date.now() });
    } else {
      const sections = this.store.thread.exchanges.map((e) => this.render(e));
      void webview.postMessage({ type: 'all', html: sections.length > 0 ? sections.join('\n') : EMPTY_THREAD, running });
    }
  }

  private onMessage(msg: unknown): void {
    const m = (typeof msg === 'object' && msg !== null ? msg : {}) as Record<string, unknown>;
    switch (m.type) {
      case 'open':
        if (typeof m.href === 'string') this.open(m.href);
        break;
      case 'ask':
        if (typeof m.question === 'string' && m.question.trim() !== '') this.asked.fire(m.question);
        break;
      case 'stop':
        for (const [exchange, stop] of this.stops) {
          if (this.store.thread.has(exchange)) stop();
        }
        break;
      case 'new':
        this.store.newThread();
        break;
      case 'copy':
        if (typeof m.text === 'string') {
          const text = m.text;
          void vscode.env.clipboard.writeText(text).then(() => {
            this.log.info(`copied a code block (${text.length} characters)`);
            void vscode.window.setStatusBarMessage('copilot-ls: code copied', 2000);
          });
        }
        break;
      case 'apply':
        this.apply(m.exchange, m.edit);
        break;
      case 'action': {
        const exchange = this.store.thread.exchanges.find((e) => e.id === m.exchange);
        const action = typeof m.action === 'number' ? exchange?.errorActions?.[m.action] : undefined;
        if (action) void vscode.commands.executeCommand(action.command, ...action.args);
        break;
      }
    }
  }

  private open(href: string): void {
    const target = classifyLink(href);
    if (target.kind === 'location') {
      // Open the file in the other column so the thread stays visible.
      const column = this.panel?.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
      void openLocation(target.location, column);
    } else if (target.kind === 'external') {
      void vscode.env.openExternal(vscode.Uri.parse(target.url));
    }
  }

  private apply(exchangeId: unknown, editId: unknown): void {
    const exchange = this.store.thread.exchanges.find((e) => e.id === exchangeId);
    const edit = exchange?.result?.edits.find((e) => e.id === editId);
    if (!exchange || !edit || exchange !== this.store.thread.lastAnswered) {
      void vscode.window.showInformationMessage('copilot-ls: only the latest answer\'s edits can be applied.');
      return;
    }
    void applySuggestedEdit(edit, this.log);
  }

  dispose(): void {
    this.panel?.dispose();
    for (const s of this.subs) s.dispose();
  }
}

/** The editor's text of a document, else the file's on disk; undefined when neither. */
function documentText(uri: string): string | undefined {
  const parsed = vscode.Uri.parse(uri);
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === parsed.toString());
  if (open) {
    return open.getText();
  }
  try {
    return parsed.scheme === 'file' ? readFileSync(parsed.fsPath, 'utf8') : undefined;
  } catch {
    return undefined;
  }
}

// The answer view: a webview panel holding the conversation as a thread. Sections are
// rendered here (thread_render.ts) and posted whole as they change, so the streamed text
// shows as it arrives. Links, Copy, Apply and the questions typed at the bottom come back
// as messages and are handled by the extension, not the webview.

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { classifyLink } from './answer_markdown';
import { answerPage, EMPTY_THREAD } from './answer_page';
import type { AnswerStore, StoreChange } from './answer_store';
import { applySuggestedEdit } from './apply_edit';
import { openLocation } from './open_location';
import type { Exchange } from './thread';
import { renderExchange } from './thread_render';

export class AnswerView implements vscode.Disposable {
  public static readonly viewType = 'copilot.answer';
  private panel: vscode.WebviewPanel | undefined;
  private readonly asked = new vscode.EventEmitter<string>();
  /** Questions typed into the thread's input box. */
  readonly onAsk = this.asked.event;
  private readonly stops = new Map<Exchange, () => void>();
  private readonly subs: vscode.Disposable[] = [];

  constructor(
    private readonly store: AnswerStore,
    private readonly log: vscode.LogOutputChannel,
  ) {
    const sub = store.onDidChange((change) => this.update(change));
    this.subs.push({ dispose: () => sub.dispose() }, this.asked);
  }

  /** Calls `stop` when the user presses Stop while `exchange` runs. */
  onStop(exchange: Exchange, stop: () => void): vscode.Disposable {
    this.stops.set(exchange, stop);
    return { dispose: () => this.stops.delete(exchange) };
  }

  /** Shows the thread, creating the panel beside the editor if needed. */
  show(preserveFocus = true): void {
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
    const last = this.store.thread.lastAnswered;
    const isLast = exchange === last;
    return renderExchange(exchange, { placements: isLast ? this.store.positions : undefined, editsApplicable: isLast });
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

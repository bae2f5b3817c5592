// Feeds the server's republished citation and suggested-edit diagnostics (source
// `copilot` on the wire, `copilot-ls` once middleware.ts renamed it) into the store's
// LivePositions, so the answer view's links and the citation tree follow the cited text
// as documents change. A document whose folder left the window keeps its places: the
// server withdrew its diagnostics with the folder, which says nothing about its text.

import * as vscode from 'vscode';
import type { AnswerStore } from './answer_store';
import type { OurDiagnostic } from './live_positions';
import { SHOWN_SOURCE, WIRE_SOURCE } from './middleware';

function codeOf(d: vscode.Diagnostic): string | undefined {
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  return code === undefined ? undefined : String(code);
}

/** Our diagnostics of one document, in the order the server published them. */
export function ourDiagnostics(uri: vscode.Uri): OurDiagnostic[] {
  const out: OurDiagnostic[] = [];
  for (const d of vscode.languages.getDiagnostics(uri)) {
    const code = codeOf(d);
    if ((d.source !== SHOWN_SOURCE && d.source !== WIRE_SOURCE) || (code !== 'citation' && code !== 'suggested-edit')) {
      continue;
    }
    // vscode-languageclient keeps the LSP `data` on the diagnostics it converts.
    const data = (d as { data?: { editId?: unknown; citation?: unknown; line?: unknown; endLine?: unknown } }).data;
    const citation =
      typeof data?.citation === 'number' && typeof data.line === 'number' && typeof data.endLine === 'number'
        ? { index: data.citation, line: data.line, endLine: data.endLine }
        : undefined;
    out.push({
      code,
      line: d.range.start.line,
      message: d.message,
      editId: typeof data?.editId === 'string' ? data.editId : undefined,
      citation,
    });
  }
  return out;
}

export function normalizeUri(uri: string): string {
  return vscode.Uri.parse(uri).toString();
}

/**
 * Whether `uri` is in a folder of the window. A window without folders has none to leave
 * (the server then answers about the directory it runs in): everything counts as in it.
 */
function inWindow(uri: vscode.Uri): boolean {
  const folders = vscode.workspace.workspaceFolders;
  return !folders || folders.length === 0 || vscode.workspace.getWorkspaceFolder(uri) !== undefined;
}

/** Re-reads every followed document now (after a reply) and on every diagnostics change. */
export function followDiagnostics(store: AnswerStore): vscode.Disposable {
  const refresh = (uris: readonly vscode.Uri[] | undefined) => {
    const positions = store.positions;
    if (!positions) {
      return;
    }
    const wanted = new Set(positions.uris());
    let changed = false;
    const targets = uris ? uris.filter((u) => wanted.has(u.toString())) : [...wanted].map((u) => vscode.Uri.parse(u));
    // A running ask's reply replaces these diagnostics: their going then means nothing.
    const allowGone = !store.thread.running;
    for (const uri of targets) {
      changed = positions.update(uri.toString(), ourDiagnostics(uri), allowGone && inWindow(uri)) || changed;
    }
    if (changed) {
      store.placementsChanged();
    }
  };
  const subs = [
    vscode.languages.onDidChangeDiagnostics((e) => refresh(e.uris)),
    store.onDidChange((change) => {
      // A new reply: pick up diagnostics that arrived before it; an ask that ended
      // without one: take what a running ask kept from going.
      if (!change.exchange || change.exchange.state !== 'running') {
        refresh(undefined);
      }
    }),
  ];
  return vscode.Disposable.from(...subs);
}

// What VS Code shows of the server's diagnostics and quick fixes, renamed so that neither
// can be taken for GitHub Copilot's: the wire contract (PROTOCOL.md section 5) names the
// diagnostics' source copilot and titles the quick fixes Copilot: <title>; the Problems
// panel and the lightbulb menu say copilot-ls. A citation without a note, whose message
// the server makes the whole question, gets a short one naming what is at its lines
// (citation_message.ts). A quick
// fix's edit opens the Refactor Preview with its change ticked, as Apply… in the thread
// does.

import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { Middleware } from 'vscode-languageclient/node';
import { citedLineText, type AskedQuestions, type CitedPlace } from './citation_message';
import { forPreview } from './edit_preview';

/** The diagnostics' source on the wire, and as shown. */
export const WIRE_SOURCE = 'copilot';
export const SHOWN_SOURCE = 'copilot-ls';
const WIRE_TITLE = /^Copilot: /;

function isOurs(action: vscode.CodeAction): boolean {
  return WIRE_TITLE.test(action.title) && (action.diagnostics ?? []).every((d) => d.source === SHOWN_SOURCE || d.source === WIRE_SOURCE);
}

function isCitation(d: vscode.Diagnostic): boolean {
  return (typeof d.code === 'object' && d.code !== null ? d.code.value : d.code) === 'citation';
}

const provideCodeActions: Middleware['provideCodeActions'] = async (document, range, context, token, next) => {
  const actions = await next(document, range, context, token);
  if (!actions) {
    return actions;
  }
  return Promise.all(
    actions.map(async (item) => {
      if (!(item instanceof vscode.CodeAction) || !isOurs(item)) {
        return item;
      }
      const title = item.title.replace(WIRE_TITLE, '');
      item.title = `copilot-ls: ${title}`;
      if (item.edit) {
        item.edit = await forPreview(item.edit, title, item.isPreferred !== false);
      }
      return item;
    }),
  );
};

/** The middleware of a client whose asks are recorded in `asked`. */
export function createMiddleware(asked: AskedQuestions): Middleware {
  return {
    handleDiagnostics(uri, diagnostics, next) {
      let lines: readonly string[] | undefined;
      const place = (d: vscode.Diagnostic) => (): CitedPlace => {
        lines ??= documentLines(uri);
        const index = (d as { data?: { citation?: unknown } }).data?.citation;
        return { index: typeof index === 'number' ? index : undefined, text: citedLineText(lines, d.range.start.line, d.range.end.line) };
      };
      for (const d of diagnostics) {
        if (d.source === WIRE_SOURCE) {
          d.source = SHOWN_SOURCE;
          if (isCitation(d)) {
            d.message = asked.citationMessage(d.message, place(d));
          }
        }
      }
      next(uri, diagnostics);
    },
    provideCodeActions,
  };
}

/** The document's lines as the editor has them, else as on disk; none when neither. */
function documentLines(uri: vscode.Uri): readonly string[] {
  const open = vscode.workspace.textDocuments.find((doc) => doc.uri.toString() === uri.toString());
  if (open) {
    return open.getText().split(/\r?\n/);
  }
  try {
    return uri.scheme === 'file' ? readFileSync(uri.fsPath, 'utf8').split(/\r?\n/) : [];
  } catch {
    return [];
  }
}

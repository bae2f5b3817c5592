// The Citations tree (of copilot-ls) in the Explorer and the "Go to Citation" quick pick:
// both list the last answer's citations and suggested edits where they are now, and open
// them on selection.

import * as vscode from 'vscode';
import type { Location } from './answer_markdown';
import type { AnswerStore } from './answer_store';
import { citationEntries, type CitationEntry } from './citation_entries';

export const OPEN_CITATION_COMMAND = 'copilot-ls.openCitation';

class CitationsProvider implements vscode.TreeDataProvider<CitationEntry> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly store: AnswerStore) {
    // Not on every streamed delta: only when an answer arrives or its places move.
    store.onDidChange((change) => {
      if (!change.exchange || change.exchange === store.thread.lastAnswered) {
        this.changed.fire();
      }
    });
  }

  getChildren(element?: CitationEntry): CitationEntry[] {
    const answer = this.store.current;
    return element || !answer ? [] : citationEntries(answer.result, this.store.positions);
  }

  getTreeItem(entry: CitationEntry): vscode.TreeItem {
    const item = new vscode.TreeItem(entry.label, vscode.TreeItemCollapsibleState.None);
    item.description = entry.description;
    item.iconPath = new vscode.ThemeIcon(entry.kind === 'edit' ? 'lightbulb' : entry.location ? 'references' : 'warning');
    item.tooltip = `${entry.label}${entry.description ? ` — ${entry.description}` : ''}`;
    if (entry.location) {
      item.command = { command: OPEN_CITATION_COMMAND, title: 'Open Citation', arguments: [entry.location] };
    }
    return item;
  }
}

export function createCitationsTree(store: AnswerStore): vscode.Disposable {
  const view = vscode.window.createTreeView('copilot-ls.citations', {
    treeDataProvider: new CitationsProvider(store),
  });
  // The header reads "Citations copilot-ls": VS Code capitalizes each word of a view's
  // name (so copilot-ls read Copilot-Ls, like GitHub Copilot), not of its description.
  view.description = 'copilot-ls';
  const update = () => {
    const answer = store.current;
    view.message = answer ? answer.question : undefined;
  };
  const sub = store.onDidChange(update);
  return vscode.Disposable.from(view, sub);
}

export async function pickCitation(store: AnswerStore): Promise<Location | undefined> {
  const answer = store.current;
  const entries = answer ? citationEntries(answer.result, store.positions).filter((e) => e.location) : [];
  if (entries.length === 0) {
    void vscode.window.showInformationMessage('copilot-ls: the last answer has no citations. Run "copilot-ls: Ask" first.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    entries.map((e) => ({
      label: `${e.kind === 'edit' ? '$(lightbulb)' : '$(references)'} ${e.label}`,
      description: e.description,
      location: e.location,
    })),
    { title: 'copilot-ls: Go to Citation', placeHolder: answer?.question, matchOnDescription: true },
  );
  return picked?.location;
}

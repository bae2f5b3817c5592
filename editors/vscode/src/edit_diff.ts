// The diff a suggested edit shows in the thread: the model's `old_text` against its
// `new_text` (from the propose_edit step that made the edit), as unified-diff lines with
// a few lines of context; and whether a document shows the edit applied. Pure; the line
// diff itself is jsdiff's.

import { structuredPatch } from 'diff';
import type { Step, SuggestedEdit } from './protocol';

export interface DiffLine {
  kind: 'context' | 'removed' | 'added' | 'hunk';
  text: string;
}

/** The old and new text of `edit`, read from the step that proposed it, if any. */
export function proposedTexts(edit: SuggestedEdit, edits: SuggestedEdit[], steps: Step[]): { oldText: string; newText: string } | undefined {
  const proposals = steps.filter((s) => s.tool === 'propose_edit' && s.ok);
  const texts = (s: Step | undefined) =>
    s && typeof s.arguments.old_text === 'string' && typeof s.arguments.new_text === 'string'
      ? { oldText: s.arguments.old_text, newText: s.arguments.new_text }
      : undefined;
  const byName = proposals.filter((s) => s.arguments.path === edit.path && s.arguments.title === edit.title);
  if (byName.length === 1) {
    return texts(byName[0]);
  }
  // Each successful propose_edit makes one edit, in order.
  if (proposals.length === edits.length) {
    return texts(proposals[edits.indexOf(edit)]);
  }
  return undefined;
}

/** Unified-diff lines of old against new, `context` lines around each change. */
export function diffLines(oldText: string, newText: string, context = 3): DiffLine[] {
  const patch = structuredPatch('a', 'b', withNewline(oldText), withNewline(newText), undefined, undefined, { context });
  const out: DiffLine[] = [];
  for (const hunk of patch.hunks) {
    if (patch.hunks.length > 1) {
      out.push({ kind: 'hunk', text: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@` });
    }
    for (const line of hunk.lines) {
      if (line.startsWith('\\')) {
        continue; // "\ No newline at end of file"
      }
      const kind = line[0] === '-' ? 'removed' : line[0] === '+' ? 'added' : 'context';
      out.push({ kind, text: line.slice(1) });
    }
  }
  return out;
}

function withNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

/**
 * Whether `text` shows the edit applied, by the server's own rule for retiring an edit:
 * its old text is gone and its new text is there, or, for a new text that holds the old
 * (a doc comment added above a line), the new text stands around the old's one
 * occurrence. An edit that creates a file (empty old text) is not judged here.
 */
export function isApplied(text: string, oldText: string, newText: string): boolean {
  if (oldText === '') {
    return false;
  }
  const first = text.indexOf(oldText);
  if (first < 0) {
    return text.includes(newText);
  }
  const inner = newText.indexOf(oldText);
  if (inner < 0 || text.indexOf(oldText, first + 1) >= 0) {
    return false;
  }
  const start = first - inner;
  return start >= 0 && text.slice(start, start + newText.length) === newText;
}

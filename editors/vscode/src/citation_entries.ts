// The jump list of an answer: its citations and suggested edits as entries for the tree
// view and the "Go to Citation" quick pick. Pure.

import { citationLabel, citationLocation, editLocation, type Location } from './answer_markdown';
import type { AskResult } from './protocol';

export interface CitationEntry {
  kind: 'citation' | 'edit';
  label: string;
  description: string;
  /** Undefined for a citation the server could not verify: there is nothing to open. */
  location: Location | undefined;
}

export function citationEntries(result: AskResult): CitationEntry[] {
  const entries: CitationEntry[] = result.citations.map((c) => ({
    kind: 'citation',
    label: citationLabel(c),
    description: c.verified ? (c.note ?? '') : `${c.note ? `${c.note} ` : ''}(not found in the workspace)`,
    location: c.verified ? citationLocation(c) : undefined,
  }));
  for (const e of result.edits) {
    const location = editLocation(e);
    entries.push({
      kind: 'edit',
      label: e.title,
      description: `suggested edit in ${e.path}:${location.line}`,
      location,
    });
  }
  return entries;
}

// The jump list of an answer: its citations and suggested edits as entries for the tree
// view and the "Go to Citation" quick pick, at the places they are now. Pure.

import { citationLabel, citationLocation, editLocation, type Location, type PlacementLookup } from './answer_markdown';
import type { AskResult } from './protocol';

export interface CitationEntry {
  kind: 'citation' | 'edit';
  label: string;
  description: string;
  /** Undefined for a citation the server could not verify: there is nothing to open. */
  location: Location | undefined;
}

export function citationEntries(result: AskResult, placements?: PlacementLookup): CitationEntry[] {
  const entries: CitationEntry[] = result.citations.map((c, i) => {
    const placement = placements?.citation(i);
    const location = placement?.location ?? citationLocation(c);
    const gone = placement?.kind === 'gone' ? ' (the cited text has changed since)' : '';
    return {
      kind: 'citation',
      label: citationLabel({ path: c.path, line: location.line, endLine: location.endLine }),
      description: c.verified ? `${c.note ?? ''}${gone}`.trim() : `${c.note ? `${c.note} ` : ''}(not found in the workspace)`,
      location: c.verified ? location : undefined,
    };
  });
  for (const e of result.edits) {
    const placement = placements?.edit(e.id);
    const location = placement?.location ?? editLocation(e);
    entries.push({
      kind: 'edit',
      label: e.title,
      description: `suggested edit in ${e.path}:${location.line}${placement?.kind === 'gone' ? ' (applied or changed)' : ''}`,
      location,
    });
  }
  return entries;
}

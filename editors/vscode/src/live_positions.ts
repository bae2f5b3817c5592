// Where the last answer's citations and suggested edits are now. The server republishes
// their diagnostics as the documents change (PROTOCOL.md section 5: a citation's
// diagnostic sits on the first line now holding the cited text, an edit's on its new
// place, and either is dropped when its text is gone), so links follow those rather than
// the AskResult's lines, which were true only when the answer arrived. Pure: the VS Code
// side hands in each document's diagnostics.

import type { Location } from './answer_markdown';
import { notelessCitationMessage } from './citation_message';
import type { AskResult } from './protocol';

/** The part of a diagnostic of ours this needs (line 0-based, as in LSP). */
export interface OurDiagnostic {
  code: 'citation' | 'suggested-edit';
  line: number;
  message: string;
  editId?: string;
  /** A citation's `data`: its index in the AskResult and the 1-based lines it covers now. */
  citation?: { index: number; line: number; endLine: number };
}

export type Placement =
  /** Where the AskResult put it; no republished position seen yet. */
  | { kind: 'original'; location: Location }
  /** Following the server's republished diagnostic. */
  | { kind: 'followed'; location: Location }
  /** Its diagnostic was seen and is now gone: the cited text is no longer there. */
  | { kind: 'gone'; location: Location };

export class LivePositions {
  private readonly citations: Placement[];
  private readonly edits = new Map<string, Placement>();
  private readonly seenCitations = new Set<number>();
  private readonly seenEdits = new Set<string>();

  /**
   * `normalize` maps a URI string to the form the diagnostics are keyed by (the VS Code
   * side passes `Uri.parse(u).toString()`, which differs from the server's in escaping).
   */
  constructor(
    private readonly result: AskResult,
    private readonly question: string,
    private readonly normalize: (uri: string) => string = (u) => u,
    editLines: Map<string, Location> = new Map(),
  ) {
    this.citations = result.citations.map((c) => ({
      kind: 'original',
      location: { uri: c.uri, line: c.line, endLine: Math.max(c.line, c.endLine) },
    }));
    for (const [id, location] of editLines) {
      this.edits.set(id, { kind: 'original', location });
    }
  }

  /** The documents whose diagnostics matter. */
  uris(): string[] {
    const set = new Set<string>();
    for (const c of this.result.citations) set.add(this.normalize(c.uri));
    for (const e of this.result.edits) set.add(this.normalize(e.uri));
    return [...set];
  }

  citation(index: number): Placement | undefined {
    return this.citations[index];
  }

  edit(id: string): Placement | undefined {
    return this.edits.get(id);
  }

  /**
   * Takes the current diagnostics of one document; true when a placement changed.
   * A citation diagnostic names its citation and lines in `data`. Without that (an older
   * server), citations are matched to citation diagnostics in order, by message (the
   * note, or when there is none the question, which the extension shows shortened as
   * citation_message.ts says): the server publishes them in citation
   * order and only ever drops some, so an order-keeping match pairs each with its own.
   * With `allowGone` false a missing diagnostic marks nothing gone: while a newer ask
   * runs, the server replaces this answer's diagnostics with the new one's just before
   * its reply, and that says nothing about the cited text.
   */
  update(uri: string, diagnostics: OurDiagnostic[], allowGone = true): boolean {
    const key = this.normalize(uri);
    let changed = false;
    const cited = diagnostics.filter((d) => d.code === 'citation');
    const byIndex = new Map<number, { line: number; endLine: number }>();
    for (const d of cited) {
      if (d.citation) byIndex.set(d.citation.index, d.citation);
    }
    const withData = byIndex.size > 0;
    let next = 0;
    this.result.citations.forEach((c, index) => {
      if (this.normalize(c.uri) !== key || !c.verified) {
        return;
      }
      let now: { line: number; endLine: number } | undefined;
      if (withData) {
        now = byIndex.get(index);
      } else {
        const messages = c.note !== undefined ? [c.note] : [this.question, notelessCitationMessage(this.question)];
        const span = Math.max(c.line, c.endLine) - c.line;
        for (let i = next; i < cited.length; i++) {
          if (messages.includes(cited[i].message)) {
            next = i + 1;
            now = { line: cited[i].line + 1, endLine: cited[i].line + 1 + span };
            break;
          }
        }
      }
      const before = this.citations[index];
      let after: Placement;
      if (now) {
        this.seenCitations.add(index);
        after = { kind: 'followed', location: { uri: c.uri, line: now.line, endLine: Math.max(now.line, now.endLine) } };
      } else if (this.seenCitations.has(index) && allowGone) {
        after = { kind: 'gone', location: before.location };
      } else {
        after = before;
      }
      if (!samePlacement(before, after)) {
        this.citations[index] = after;
        changed = true;
      }
    });
    for (const e of this.result.edits) {
      if (this.normalize(e.uri) !== key) {
        continue;
      }
      const before = this.edits.get(e.id);
      const d = diagnostics.find((x) => x.code === 'suggested-edit' && x.editId === e.id);
      let after: Placement | undefined;
      if (d) {
        this.seenEdits.add(e.id);
        after = { kind: 'followed', location: { uri: e.uri, line: d.line + 1, endLine: d.line + 1 } };
      } else if (this.seenEdits.has(e.id) && before && allowGone) {
        after = { kind: 'gone', location: before.location };
      } else {
        after = before;
      }
      if (after && (!before || !samePlacement(before, after))) {
        this.edits.set(e.id, after);
        changed = true;
      }
    }
    return changed;
  }
}

function samePlacement(a: Placement, b: Placement): boolean {
  return a.kind === b.kind && a.location.line === b.location.line && a.location.endLine === b.location.endLine;
}

// Turns an AskResult's answer into markdown and HTML in which every citation (and every
// `path:line` mention of a cited file in the answer text) is a link to that file and
// line. Pure: markdown-it runs in plain Node, so tests can check the HTML without VS Code.

import MarkdownIt from 'markdown-it';
import { highlightCode } from './highlight';
import type { Placement } from './live_positions';
import type { AskResult, Citation, SuggestedEdit } from './protocol';

/** A place in a file, lines 1-based and inclusive, as people count them. */
export interface Location {
  uri: string;
  line: number;
  endLine: number;
}

/**
 * A link target for a location: the file URI with a GitHub-style `#L26-L34` fragment.
 * The view resolves these itself (the webview posts them back to the extension), so the
 * format only has to round-trip through `parseLocationHref`.
 */
export function locationHref(loc: Location): string {
  const base = loc.uri.split('#')[0];
  return loc.endLine > loc.line ? `${base}#L${loc.line}-L${loc.endLine}` : `${base}#L${loc.line}`;
}

export function parseLocationHref(href: string): Location | undefined {
  const m = /^(file:\/\/[^#]*)#L(\d+)(?:-L?(\d+))?$/.exec(href);
  if (!m) {
    return undefined;
  }
  const line = Number(m[2]);
  const endLine = m[3] !== undefined ? Number(m[3]) : line;
  if (line < 1 || endLine < line) {
    return undefined;
  }
  return { uri: m[1], line, endLine };
}

export function citationLabel(c: Pick<Citation, 'path' | 'line' | 'endLine'>): string {
  return c.endLine > c.line ? `${c.path}:${c.line}-${c.endLine}` : `${c.path}:${c.line}`;
}

export function citationLocation(c: Citation): Location {
  return { uri: c.uri, line: c.line, endLine: Math.max(c.line, c.endLine) };
}

/**
 * Where a suggested edit starts, read from its WorkspaceEdit (documentChanges or changes),
 * so the view can link to it. Line 1 when the edit has no readable range (a new file).
 */
export function editLocation(e: SuggestedEdit): Location {
  const edit = e.edit as {
    documentChanges?: Array<{ textDocument?: { uri?: string }; edits?: Array<{ range?: { start?: { line?: number } } }> }>;
    changes?: Record<string, Array<{ range?: { start?: { line?: number } } }>>;
  } | null;
  let line0: number | undefined;
  const first = edit?.documentChanges?.find((d) => Array.isArray(d.edits));
  if (first?.edits?.[0]?.range?.start?.line !== undefined) {
    line0 = first.edits[0].range.start.line;
  } else if (edit?.changes) {
    const list = edit.changes[e.uri] ?? Object.values(edit.changes)[0];
    line0 = list?.[0]?.range?.start?.line;
  }
  const line = (line0 ?? 0) + 1;
  return { uri: e.uri, line, endLine: line };
}

// A no-model answer says itself that no model is configured (and how to set one).
const STOP_NOTES: Record<string, string | undefined> = {
  answered: undefined,
  max_steps: 'The step limit (`copilot-ls.maxSteps`) was reached before the model gave a final answer.',
  no_provider: undefined,
  cancelled: 'The question was cancelled.',
};

/** Escapes text that goes inside a markdown link label or list item verbatim. */
export function escapeMarkdown(text: string): string {
  return text.replace(/([\\`*_[\]<>#|])/g, '\\$1');
}

/** Where the citations and edits of an answer are now (live_positions.ts), if known. */
export interface PlacementLookup {
  citation(index: number): Placement | undefined;
  edit(id: string): Placement | undefined;
}

/**
 * The answer part of a reply as markdown: why it stopped early (if it did), the answer,
 * and its citations, each linked to where the cited text is now.
 */
export function answerMarkdown(result: AskResult, placements?: PlacementLookup): string {
  const out: string[] = [];
  const note = STOP_NOTES[result.stopReason];
  if (note) {
    out.push(`> ${note}`, '');
  }
  out.push(result.answer.trim() === '' ? '_The model gave no answer text._' : result.answer.trim(), '');

  // A no-model answer is itself the list of places (each with its excerpt, its
  // `path:line` linked by mentionLinks): listing them again would say it twice.
  if (result.citations.length > 0 && result.stopReason !== 'no_provider') {
    out.push('#### Citations', '');
    result.citations.forEach((c, i) => {
      const placement = placements?.citation(i);
      const loc = placement?.location ?? citationLocation(c);
      const label = escapeMarkdown(citationLabel({ path: c.path, line: loc.line, endLine: loc.endLine }));
      let text: string;
      if (!c.verified) {
        text = `${label} _(not found in the workspace)_`;
      } else if (placement?.kind === 'gone') {
        text = `[${label}](${locationHref(loc)}) _(the cited text has changed since)_`;
      } else {
        text = `[${label}](${locationHref(loc)})`;
      }
      const noteText = c.note ? ` — ${escapeMarkdown(c.note)}` : '';
      out.push(`${i + 1}. ${text}${noteText}`);
    });
    out.push('');
  }
  return out.join('\n');
}

/** Where a `path:line` mention of the answer points now: its lines, moved or not. */
export type MentionFollower = (path: string, line: number, endLine: number) => { line: number; endLine: number };

/**
 * Moves a mention that falls inside a citation's lines by as many lines as that
 * citation moved since the answer: the same places (live_positions.ts, fed by the server's
 * republished diagnostics) that the citation links, the tree, Go to Citation and the
 * Problems panel show. A mention outside every citation, or of one whose text is gone,
 * keeps its lines.
 */
export function mentionFollower(result: AskResult, placements: PlacementLookup | undefined): MentionFollower {
  return (path, line, endLine) => {
    let best: { index: number; span: number } | undefined;
    result.citations.forEach((c, index) => {
      const last = Math.max(c.line, c.endLine);
      if (c.verified && c.path === path && line >= c.line && line <= last && (!best || last - c.line < best.span)) {
        best = { index, span: last - c.line };
      }
    });
    const placement = best && placements?.citation(best.index);
    if (!best || placement?.kind !== 'followed') {
      return { line, endLine };
    }
    const delta = placement.location.line - result.citations[best.index].line;
    return { line: line + delta, endLine: endLine + delta };
  };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A markdown-it rule that turns `path:line` and `path:line-line` mentions of the given
 * files, in plain text and in inline code, into location links to where `follow` says
 * those lines are now (the mention's text says so too). Mentions already inside a link
 * are left alone.
 */
function mentionLinks(md: InstanceType<typeof MarkdownIt>, uriOfPath: Map<string, string>, follow: MentionFollower): void {
  if (uriOfPath.size === 0) {
    return;
  }
  // Longest paths first so `src/a.rs` does not win over `src/a.rs.bak`; the lookbehind
  // keeps `xsrc/a.rs:3` from matching `src/a.rs:3`.
  const paths = [...uriOfPath.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const pattern = new RegExp(`(?<![\\w/.-])(${paths.join('|')}):(\\d+)(?:-(\\d+))?`, 'g');

  md.core.ruler.push('copilot_mentions', (state) => {
    for (const block of state.tokens) {
      if (block.type !== 'inline' || !block.children) {
        continue;
      }
      const children: typeof block.children = [];
      let linkDepth = 0;
      for (const tok of block.children) {
        if (tok.type === 'link_open') linkDepth++;
        if (tok.type === 'link_close') linkDepth--;
        if (linkDepth > 0 || (tok.type !== 'text' && tok.type !== 'code_inline')) {
          children.push(tok);
          continue;
        }
        let last = 0;
        pattern.lastIndex = 0;
        for (let m = pattern.exec(tok.content); m; m = pattern.exec(tok.content)) {
          const said = Number(m[2]);
          if (said < 1) {
            continue;
          }
          const { line, endLine } = follow(m[1], said, m[3] !== undefined ? Math.max(said, Number(m[3])) : said);
          const label = line === said ? m[0] : m[3] !== undefined ? `${m[1]}:${line}-${endLine}` : `${m[1]}:${line}`;
          if (tok.type === 'text' && m.index > last) {
            const before = new state.Token('text', '', 0);
            before.content = tok.content.slice(last, m.index);
            children.push(before);
          }
          const open = new state.Token('link_open', 'a', 1);
          open.attrs = [['href', locationHref({ uri: uriOfPath.get(m[1]) as string, line, endLine })]];
          const inner = new state.Token(tok.type, tok.tag, 0);
          // Inline code stays code as a whole: the link wraps the entire span.
          inner.content = tok.type === 'code_inline' ? tok.content.replace(m[0], () => label) : label;
          inner.markup = tok.markup;
          children.push(open, inner, new state.Token('link_close', 'a', -1));
          last = tok.type === 'code_inline' ? tok.content.length : m.index + m[0].length;
          if (tok.type === 'code_inline') {
            break;
          }
        }
        if (last === 0) {
          children.push(tok);
        } else if (last < tok.content.length) {
          const after = new state.Token('text', '', 0);
          after.content = tok.content.slice(last);
          children.push(after);
        }
      }
      block.children = children;
    }
  });
}

/** The files the answer may link to: every cited and every edited file. */
export function linkablePaths(result: AskResult): Map<string, string> {
  const map = new Map<string, string>();
  for (const c of result.citations) {
    if (c.verified) map.set(c.path, c.uri);
  }
  for (const e of result.edits) {
    map.set(e.path, e.uri);
  }
  return map;
}

/**
 * The markdown renderer of the view: no raw HTML from the model gets through, mentions
 * of `uriOfPath`'s files become location links, and fenced code is highlighted and gets
 * a copy button.
 */
export function createMarkdown(
  uriOfPath: Map<string, string> = new Map(),
  follow: MentionFollower = (_path, line, endLine) => ({ line, endLine }),
): InstanceType<typeof MarkdownIt> {
  const md: InstanceType<typeof MarkdownIt> = new MarkdownIt({
    html: false,
    linkify: false,
    breaks: false,
    highlight: (code, lang) => highlightCode(code, lang) ?? '',
  });
  // markdown-it refuses file: links by default; ours are the point of the view. Script
  // schemes stay refused, and the view opens nothing but locations and http(s) links.
  md.validateLink = (url: string) => !/^\s*(javascript|vbscript|data):/i.test(url);
  const fence = md.renderer.rules.fence;
  md.renderer.rules.fence = (tokens, idx, options, env, self) => {
    const inner = fence ? fence(tokens, idx, options, env, self) : self.renderToken(tokens, idx, options);
    return `<div class="code-block"><button class="copy" type="button" title="Copy the code">Copy</button>${inner}</div>\n`;
  };
  mentionLinks(md, uriOfPath, follow);
  return md;
}

/** What a click on a link in the view should do. */
export type LinkTarget =
  | { kind: 'location'; location: Location }
  | { kind: 'external'; url: string }
  | { kind: 'ignore' };

export function classifyLink(href: string): LinkTarget {
  const location = parseLocationHref(href);
  if (location) {
    return { kind: 'location', location };
  }
  if (/^https?:\/\//i.test(href)) {
    return { kind: 'external', url: href };
  }
  return { kind: 'ignore' };
}

// The HTML of one exchange of the thread: the question, the model's turns (reasoning
// collapsed once its tool calls arrive, each tool call a progress line), the answer as it
// streams and then as replied, its citations where they are now, and each suggested edit
// as a diff with an Apply button. Pure: the view only places these sections.

import {
  answerMarkdown,
  createMarkdown,
  editLocation,
  escapeMarkdown,
  linkablePaths,
  locationHref,
  mentionFollower,
  type PlacementLookup,
} from './answer_markdown';
import { phaseText } from './ask_phase';
import { diffLines, proposedTexts } from './edit_diff';
import type { AskResult, Step, SuggestedEdit, Usage } from './protocol';
import { turnViews, type Exchange, type TurnView } from './thread';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** The main argument of a tool call, as the server's progress reports name it. */
function mainArgument(step: Step): string | undefined {
  const a = step.arguments;
  for (const key of ['pattern', 'query', 'path', 'name', 'symbol']) {
    const v = a[key];
    if (typeof v === 'string' && v !== '') {
      if (key === 'path' && typeof a.start_line === 'number') {
        return typeof a.end_line === 'number' ? `${v}:${a.start_line}-${a.end_line}` : `${v}:${a.start_line}`;
      }
      return v;
    }
  }
  return undefined;
}

/**
 * What a tool call's line says after the tool's name: its main argument and the server's
 * summary, each once. Summaries often restate the argument (`src/a.rs:1-40` for a read,
 * `X: 3 definitions` for a lookup, `edit src/a.rs:12-14` for propose_edit, whose
 * summary the server composes in tools/propose_edit.rs): a summary that names the
 * argument is shown alone, without the argument before it.
 */
export function stepParts(step: Step): { arg?: string; said: string } {
  const arg = mainArgument(step);
  const summary = step.summary ?? '';
  if (arg === undefined || summary === '') {
    return { arg, said: summary };
  }
  if (summary === arg) {
    return { arg, said: '' };
  }
  if (summary.startsWith(`${arg}: `)) {
    return { arg, said: summary.slice(arg.length + 2) };
  }
  // A path (with or without its lines) that the summary names, as propose_edit's
  // `edit path:12-14` does. Only paths: a short search pattern may well occur in any
  // summary by chance.
  const path = arg.replace(/:\d+(-\d+)?$/, '');
  if (step.arguments.path === path && summary.includes(path)) {
    return { said: summary };
  }
  return { arg, said: summary };
}

export function stepLine(step: Step): string {
  const { arg, said } = stepParts(step);
  const summary = said ? ` — ${escapeHtml(said)}` : '';
  return (
    `<li class="step ${step.ok ? 'ok' : 'failed'}"><span class="mark">${step.ok ? '✓' : '✗'}</span> ` +
    `<code>${escapeHtml(step.tool)}</code>${arg ? ` ${escapeHtml(arg)}` : ''}${summary}</li>`
  );
}

/** A tool call's line as plain text (the Chat view's progress). */
export function stepText(step: Step): string {
  const { arg, said } = stepParts(step);
  return `${step.ok ? '✓' : '✗'} ${step.tool}${arg ? ` ${arg}` : ''}${said ? ` — ${said}` : ''}`;
}

/** First words of a reasoning turn, for its collapsed summary. */
function gist(text: string, max = 90): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

function renderTurn(exchange: Exchange, view: TurnView, md: ReturnType<typeof createMarkdown>): string {
  const steps = view.turn.steps.length > 0 ? `<ul class="steps">${view.turn.steps.map(stepLine).join('')}</ul>` : '';
  switch (view.kind) {
    case 'reasoning':
      return (
        `<details class="reasoning" data-key="${exchange.id}-${view.turn.turn}"><summary>Reasoning: ${escapeHtml(gist(view.turn.text))}</summary>` +
        `<div class="md">${md.render(view.turn.text)}</div></details>${steps}`
      );
    case 'streaming':
      return `<div class="md streaming">${md.render(view.turn.text)}</div>`;
    case 'steps':
      return steps;
  }
}

function usageLine(usage: Usage | undefined, answeredBy: Exchange['answeredBy']): string {
  const by = answeredBy ? `answered by ${escapeHtml(answeredBy.model)}` : '';
  if (!usage || usage.modelCalls === 0) {
    return by ? `<p class="usage">${by.replace(/^a/, 'A')}</p>` : '';
  }
  const n = (x: number) => x.toLocaleString('en-US');
  const cached = usage.cachedInputTokens > 0 ? ` (${n(usage.cachedInputTokens)} cached)` : '';
  const calls = usage.modelCalls === 1 ? '1 model call' : `${usage.modelCalls} model calls`;
  return `<p class="usage">${calls} · ${n(usage.inputTokens)} input tokens${cached} · ${n(usage.outputTokens)} output tokens${by ? ` · ${by}` : ''}</p>`;
}

function renderEdit(edit: SuggestedEdit, result: AskResult, options: RenderOptions): string {
  const placement = options.placements?.edit(edit.id);
  const loc = placement?.location ?? editLocation(edit);
  const where = `${edit.path}:${loc.line}`;
  const texts = proposedTexts(edit, result.edits, result.steps);
  const lines = texts ? diffLines(texts.oldText, texts.newText) : [];
  const diff =
    lines.length > 0
      ? `<pre class="diff">${lines
          .map((l) => {
            const sign = l.kind === 'removed' ? '-' : l.kind === 'added' ? '+' : l.kind === 'hunk' ? '' : ' ';
            // Each line is a block of its own: no newlines between them.
            return `<span class="${l.kind}">${escapeHtml(sign + l.text)}</span>`;
          })
          .join('')}</pre>`
      : '';
  // Whether the document shows it applied, from whichever answer and however it was.
  const applied = texts !== undefined && options.isApplied?.(edit, texts) === true;
  let action: string;
  if (applied) {
    action = '<span class="edit-note applied">applied</span>';
  } else if (!options.editsApplicable) {
    action = '<span class="edit-note">only the latest answer\'s edits can be applied</span>';
  } else if (placement?.kind === 'gone') {
    action = `<span class="edit-note">${texts ? 'no longer applies: its text has changed since' : 'applied, or its text has changed since'}</span>`;
  } else {
    action = `<button class="apply" type="button" data-edit="${escapeHtml(edit.id)}" title="Review the change in the Refactor Preview, then apply it">Apply…</button>`;
  }
  return (
    `<div class="edit" data-edit-id="${escapeHtml(edit.id)}"><div class="edit-head"><b>${escapeHtml(edit.title)}</b> in ` +
    `<a href="${escapeHtml(locationHref(loc))}">${escapeHtml(where)}</a> ${action}</div>${diff}</div>`
  );
}

export interface RenderOptions {
  /** Where the citations and edits are now (or, for an earlier answer, were last seen). */
  placements?: PlacementLookup;
  /** Whether its edits can still be applied (the server keeps only the latest ask's). */
  editsApplicable: boolean;
  /** Whether the edit's document shows it applied (edit_diff.ts `isApplied`). */
  isApplied?: (edit: SuggestedEdit, texts: { oldText: string; newText: string }) => boolean;
}

/** One exchange as an HTML section (everything from the model is escaped or rendered). */
export function renderExchange(exchange: Exchange, options: RenderOptions): string {
  const result = exchange.result;
  const md = createMarkdown(result ? linkablePaths(result) : new Map(), result ? mentionFollower(result, options.placements) : undefined);
  const parts: string[] = [];
  parts.push(`<h3 class="question">${md.renderInline(escapeMarkdown(exchange.question))}</h3>`);
  const turns = turnViews(exchange).map((v) => renderTurn(exchange, v, md));
  if (turns.length > 0) {
    parts.push(`<div class="turns">${turns.join('')}</div>`);
  }
  if (result) {
    parts.push(`<div class="answer md">${md.render(answerMarkdown(result, options.placements))}</div>`);
    if (result.edits.length > 0) {
      parts.push(
        `<div class="edits"><h4>Suggested edits</h4>${result.edits
          .map((e) => renderEdit(e, result, options))
          .join('')}</div>`,
      );
    }
    parts.push(usageLine(result.usage, exchange.answeredBy));
    if (exchange.answeredBy?.notice) {
      parts.push(`<p class="model-notice">${escapeHtml(exchange.answeredBy.notice)}</p>`);
    }
  }
  if (exchange.state === 'running') {
    parts.push(`<p class="phase"><span class="spinner"></span> ${escapeHtml(phaseText(exchange.phase))}</p>`);
  } else if (exchange.state === 'failed') {
    // The thread is the plugin's own: its messages need no `copilot-ls:` prefix here.
    const message = (exchange.error ?? 'The question failed.').replace(/^copilot-ls: /, '');
    const buttons = (exchange.errorActions ?? [])
      .map((a, i) => `<button class="error-action" type="button" data-action="${i}">${escapeHtml(a.label)}</button>`)
      .join(' ');
    parts.push(`<div class="error"><p>${escapeHtml(message)}</p>${buttons ? `<p class="error-actions">${buttons}</p>` : ''}</div>`);
  } else if (exchange.state === 'cancelled' && !result) {
    parts.push('<p class="cancelled">Cancelled.</p>');
  }
  return `<section class="exchange" id="exchange-${exchange.id}" data-state="${exchange.state}">${parts.join('')}</section>`;
}

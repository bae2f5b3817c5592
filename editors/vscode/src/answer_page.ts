// The answer view's page: the thread's sections, the input box at the bottom, the styles
// (theme colours, highlighted code, diffs) and the script that places updated sections,
// keeps opened reasoning open, brings a new question into view, makes Stop the primary
// button while a question runs, and posts clicks back to the extension. Pure: one string.

export interface PageInput {
  nonce: string;
  cspSource: string;
  /** The rendered sections of the thread, in order; empty for a new thread. */
  sections: string[];
  running: boolean;
}

export const EMPTY_THREAD = '<p class="empty">No answer yet. Type a question below, or run <b>copilot-ls: Ask</b> (Ctrl+Alt+/).</p>';

const STYLE = `
  body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); line-height: 1.5; padding: 0 16px 120px; }
  /* Every link underlined, in paragraphs as in lists (the webview's default differs). */
  #answer a { color: var(--vscode-textLink-foreground); cursor: pointer; text-decoration: underline; }
  #answer a:hover { color: var(--vscode-textLink-activeForeground); }
  /* A long path (a citation link, a path in code) breaks where it must rather than
     widening the page: in a narrow panel the thread never scrolls sideways. */
  #answer { overflow-wrap: anywhere; }
  code { font-family: var(--vscode-editor-font-family); background: var(--vscode-textCodeBlock-background); padding: 0 3px; border-radius: 3px; }
  pre { background: var(--vscode-textCodeBlock-background); padding: 8px; overflow-x: auto; margin: 0; }
  pre code { padding: 0; background: none; }
  blockquote { margin: 0; padding: 2px 12px; border-left: 4px solid var(--vscode-textBlockQuote-border); background: var(--vscode-textBlockQuote-background); }
  .exchange { border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 8px; }
  /* Room for the last question to come to the top of the view, its answer below it. */
  #answer > .exchange:last-child { min-height: calc(100vh - 120px); border-bottom: none; }
  h3.question { margin: 16px 0 8px; }
  .empty { opacity: 0.7; }
  details.reasoning { margin: 4px 0; opacity: 0.85; }
  details.reasoning > summary { cursor: pointer; color: var(--vscode-descriptionForeground); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  details.reasoning > .md { border-left: 2px solid var(--vscode-panel-border); padding-left: 8px; }
  ul.steps { list-style: none; padding-left: 4px; margin: 2px 0; color: var(--vscode-descriptionForeground); font-size: 0.95em; }
  .step.failed .mark { color: var(--vscode-errorForeground); }
  .step.ok .mark { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
  .phase { color: var(--vscode-descriptionForeground); font-style: italic; }
  .spinner { display: inline-block; width: 0.8em; height: 0.8em; border: 2px solid var(--vscode-descriptionForeground); border-right-color: transparent; border-radius: 50%; animation: spin 1s linear infinite; vertical-align: -1px; }
  @keyframes spin { to { transform: rotate(360deg); } }
  .error > p:first-child { color: var(--vscode-errorForeground); }
  .error-actions { margin-top: 0; }
  .usage { color: var(--vscode-descriptionForeground); font-size: 0.9em; }
  .model-notice { color: var(--vscode-descriptionForeground); font-size: 0.9em; border-left: 2px solid var(--vscode-textBlockQuote-border); padding-left: 8px; }
  .code-block { position: relative; margin: 8px 0; }
  .code-block .copy { position: absolute; top: 4px; right: 4px; opacity: 0.6; }
  .code-block:hover .copy, .code-block .copy:focus { opacity: 1; }
  button { font-family: inherit; font-size: 0.9em; color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); border: none; padding: 2px 8px; border-radius: 2px; cursor: pointer; }
  button:hover { background: var(--vscode-button-secondaryHoverBackground); }
  button.primary, button.apply { color: var(--vscode-button-foreground); background: var(--vscode-button-background); }
  button.primary:hover, button.apply:hover { background: var(--vscode-button-hoverBackground); }
  button:disabled { opacity: 0.5; cursor: default; }
  .edit { margin: 8px 0; }
  .edit-head { margin-bottom: 4px; }
  .edit-note { color: var(--vscode-descriptionForeground); font-style: italic; }
  /* A diff wraps its long lines, so a narrow panel never scrolls sideways; each line's
     wrapped rows start right of its +/- marker, which keeps its column to itself. */
  pre.diff { white-space: pre-wrap; overflow-wrap: anywhere; }
  pre.diff span { display: block; padding-left: 2ch; text-indent: -2ch; }
  pre.diff .removed { background: var(--vscode-diffEditor-removedLineBackground, var(--vscode-diffEditor-removedTextBackground)); }
  pre.diff .added { background: var(--vscode-diffEditor-insertedLineBackground, var(--vscode-diffEditor-insertedTextBackground)); }
  pre.diff .hunk { color: var(--vscode-descriptionForeground); }
  /* highlight.js classes in the theme's colours. */
  .hljs-keyword, .hljs-meta .hljs-keyword, .hljs-built_in, .hljs-type { color: var(--vscode-symbolIcon-keywordForeground, #569cd6); }
  .hljs-string, .hljs-regexp, .hljs-char { color: var(--vscode-debugTokenExpression-string, #ce9178); }
  .hljs-number, .hljs-literal { color: var(--vscode-debugTokenExpression-number, #b5cea8); }
  .hljs-comment, .hljs-quote { color: var(--vscode-descriptionForeground); font-style: italic; }
  .hljs-title, .hljs-title.function_, .hljs-function .hljs-title { color: var(--vscode-symbolIcon-functionForeground, #dcdcaa); }
  .hljs-title.class_, .hljs-class .hljs-title { color: var(--vscode-symbolIcon-classForeground, #4ec9b0); }
  .hljs-attr, .hljs-attribute, .hljs-variable, .hljs-params, .hljs-property { color: var(--vscode-debugTokenExpression-name, #9cdcfe); }
  .hljs-meta, .hljs-symbol { color: var(--vscode-symbolIcon-constantForeground, #c586c0); }
  #composer { position: fixed; left: 0; right: 0; bottom: 0; padding: 8px 16px; background: var(--vscode-editor-background); border-top: 1px solid var(--vscode-panel-border); display: flex; gap: 8px; align-items: flex-end; }
  #question { flex: 1; resize: vertical; min-height: 2.6em; font-family: inherit; font-size: inherit; color: var(--vscode-input-foreground); background: var(--vscode-input-background); border: 1px solid var(--vscode-input-border, transparent); padding: 4px 6px; }
  #question:focus { outline: 1px solid var(--vscode-focusBorder); }
  #composer .buttons { display: flex; flex-direction: column; gap: 4px; }
`;

// Runs in the webview. Sections arrive whole and replace their predecessor by id; the
// time from a delta's arrival in the extension to its frame, and the part of it spent
// before the extension posted it, are kept in body[data-delta-latencies] as
// "total:extension" milliseconds (the end-to-end test reads them).
const SCRIPT = `
  const vscode = acquireVsCodeApi();
  const thread = document.getElementById('answer');
  const question = document.getElementById('question');
  const send = document.getElementById('send');
  const stop = document.getElementById('stop');
  const latencies = [];
  function openKeys() { return new Set([...document.querySelectorAll('details[open][data-key]')].map((d) => d.dataset.key)); }
  function reopen(root, keys) { for (const d of root.querySelectorAll('details[data-key]')) if (keys.has(d.dataset.key)) d.open = true; }
  // What each section shows now. A section is replaced only when its HTML changes: the
  // extension re-sends sections as documents and diagnostics move, and a replacement
  // between a button's mousedown and mouseup loses the click (it lands on #answer).
  const shown = new Map();
  function place(id, html) {
    if (shown.get(id) === html && document.getElementById('exchange-' + id)) return;
    shown.set(id, html);
    shown.delete('all');
    const keys = openKeys();
    const template = document.createElement('template');
    template.innerHTML = html;
    const next = template.content.firstElementChild;
    const old = document.getElementById('exchange-' + id);
    if (old) old.replaceWith(next); else { thread.querySelector('.empty')?.remove(); thread.appendChild(next); }
    reopen(next, keys);
    if (!old) showQuestion(next);
  }
  // A new question comes into view at the top, and the page then stays where it is as its
  // answer streams in below (the reader starts at the question and scrolls on themselves),
  // never following the text to the bottom nor pulling a reader who scrolled back up.
  // (window.scrollTo, not scrollIntoView: that could scroll the workbench around the view.)
  function showQuestion(section) {
    const question = section.querySelector('.question');
    if (question) window.scrollTo(0, window.scrollY + question.getBoundingClientRect().top - 8);
  }
  // While a question runs, Stop is the button to press: it takes the primary colour and
  // Ask (disabled) the secondary one; once it ends, Ask is primary again.
  function setRunning(running) {
    send.disabled = running;
    send.classList.toggle('primary', !running);
    stop.classList.toggle('primary', running);
    stop.hidden = !running;
  }
  window.addEventListener('message', (event) => {
    const m = event.data;
    if (m.type === 'exchange') {
      place(m.id, m.html);
    } else if (m.type === 'all' && m.html !== shown.get('all')) {
      shown.clear();
      shown.set('all', m.html);
      const keys = openKeys();
      thread.innerHTML = m.html;
      reopen(thread, keys);
    }
    if (typeof m.running === 'boolean') setRunning(m.running);
    if (typeof m.arrivedAt === 'number') {
      requestAnimationFrame(() => {
        latencies.push((Date.now() - m.arrivedAt) + ':' + (m.sentAt - m.arrivedAt));
        if (latencies.length > 1000) latencies.shift();
        document.body.dataset.deltaLatencies = latencies.join(',');
      });
    }
  });
  // A press on a link must not focus the webview: the workbench hears of that focus
  // asynchronously and could take it back from the editor the link opens.
  document.addEventListener('mousedown', (event) => {
    if (event.target instanceof Element && event.target.closest('a[href]')) event.preventDefault();
  });
  document.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target : null;
    const link = target?.closest('a[href]');
    if (link) {
      event.preventDefault();
      vscode.postMessage({ type: 'open', href: link.getAttribute('href') });
      return;
    }
    const copy = target?.closest('button.copy');
    if (copy) {
      const code = copy.parentElement?.querySelector('pre');
      vscode.postMessage({ type: 'copy', text: code ? code.innerText : '' });
      return;
    }
    const apply = target?.closest('button.apply');
    if (apply) {
      const section = apply.closest('.exchange');
      vscode.postMessage({ type: 'apply', exchange: Number(section?.id.replace('exchange-', '')), edit: apply.dataset.edit });
      return;
    }
    const fix = target?.closest('button.error-action');
    if (fix) {
      const section = fix.closest('.exchange');
      vscode.postMessage({ type: 'action', exchange: Number(section?.id.replace('exchange-', '')), action: Number(fix.dataset.action) });
    }
  });
  function ask() {
    const text = question.value.trim();
    if (!text || send.disabled) return;
    vscode.postMessage({ type: 'ask', question: text });
    question.value = '';
  }
  send.addEventListener('click', ask);
  stop.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
  document.getElementById('new').addEventListener('click', () => vscode.postMessage({ type: 'new' }));
  // A thread opened again opens at its last question, not at the top of the thread.
  const last = thread.querySelector('.exchange:last-of-type');
  if (last) showQuestion(last);
  question.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      ask();
    }
  });
`;

export function answerPage(input: PageInput): string {
  const body = input.sections.length > 0 ? input.sections.join('\n') : EMPTY_THREAD;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${input.cspSource} 'unsafe-inline'; script-src 'nonce-${input.nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style>${STYLE}</style>
</head>
<body>
<main id="answer">${body}</main>
<footer id="composer">
  <textarea id="question" rows="2" aria-label="Question" placeholder="Ask a question or a follow-up (Enter to send, Shift+Enter for a new line)"></textarea>
  <div class="buttons">
    <button id="send" type="button"${input.running ? ' disabled' : ' class="primary"'}>Ask</button>
    <button id="stop" type="button"${input.running ? ' class="primary"' : ' hidden'}>Stop</button>
    <button id="new" type="button" title="Start a new conversation">New</button>
  </div>
</footer>
<script nonce="${input.nonce}">${SCRIPT}</script>
</body>
</html>`;
}

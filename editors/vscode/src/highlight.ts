// Syntax highlighting of the code blocks in answers: highlight.js core with the
// languages a codebase answer mostly shows, bundled into the extension (the webview
// loads nothing from the network). Pure.

import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import ini from 'highlight.js/lib/languages/ini';
import yaml from 'highlight.js/lib/languages/yaml';

const LANGUAGES = { bash, c, cpp, diff, go, javascript, json, python, rust, typescript, ini, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) {
  hljs.registerLanguage(name, language);
}
// The languages bring their own aliases (rs, ts, js, py, sh, toml via ini, yml, ...).

/**
 * The highlighted HTML of `code` in `lang`, or undefined for a language it does not know
 * (the caller then escapes the code as plain text). No guessing of unnamed languages.
 */
export function highlightCode(code: string, lang: string): string | undefined {
  const name = lang.trim().split(/\s+/)[0]?.toLowerCase();
  if (!name || !hljs.getLanguage(name)) {
    return undefined;
  }
  return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
}

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerMarkdown, classifyLink, editLocation, locationHref, mentionFollower, parseLocationHref, type PlacementLookup } from '../../src/answer_markdown';
import type { AskResult } from '../../src/protocol';
import { Thread } from '../../src/thread';
import { renderExchange } from '../../src/thread_render';
import { ROOT, sampleResult } from './fixtures';

/** The HTML the thread shows for one answered question. */
function renderAnswerHtml(question: string, result: AskResult): string {
  const thread = new Thread('conv-1');
  const exchange = thread.start(question);
  thread.complete(exchange, result);
  return renderExchange(exchange, { editsApplicable: true });
}

const RL = `${ROOT}/src/rate_limit.rs`;

describe('location links', () => {
  it('round-trip a line and a line range', () => {
    assert.equal(locationHref({ uri: RL, line: 26, endLine: 34 }), `${RL}#L26-L34`);
    assert.equal(locationHref({ uri: RL, line: 7, endLine: 7 }), `${RL}#L7`);
    assert.deepEqual(parseLocationHref(`${RL}#L26-L34`), { uri: RL, line: 26, endLine: 34 });
    assert.deepEqual(parseLocationHref(`${RL}#L7`), { uri: RL, line: 7, endLine: 7 });
  });

  it('reject anything else', () => {
    for (const href of [RL, `${RL}#L0`, `${RL}#L9-L3`, 'https://example.com/#L3', 'javascript:alert(1)#L1']) {
      assert.equal(parseLocationHref(href), undefined, href);
    }
  });

  it('classify clicks', () => {
    assert.equal(classifyLink(`${RL}#L3`).kind, 'location');
    assert.deepEqual(classifyLink('https://docs.rs/x'), { kind: 'external', url: 'https://docs.rs/x' });
    assert.equal(classifyLink('command:workbench.action.quit').kind, 'ignore');
  });
});

describe('path:line mentions in the answer', () => {
  const moved: PlacementLookup = {
    citation: (i) => (i === 0 ? { kind: 'followed', location: { uri: RL, line: 29, endLine: 37 } } : undefined),
    edit: () => undefined,
  };

  it('move with the citation whose lines they fall in, and only those', () => {
    const follow = mentionFollower(sampleResult(), moved);
    assert.deepEqual(follow('src/rate_limit.rs', 26, 26), { line: 29, endLine: 29 });
    assert.deepEqual(follow('src/rate_limit.rs', 30, 32), { line: 33, endLine: 35 });
    // Outside the citation, another file, an unverified citation: as written.
    assert.deepEqual(follow('src/rate_limit.rs', 60, 60), { line: 60, endLine: 60 });
    assert.deepEqual(follow('src/missing.rs', 1, 1), { line: 1, endLine: 1 });
    // Not moved (yet), or its text gone: as written.
    assert.deepEqual(mentionFollower(sampleResult(), undefined)('src/rate_limit.rs', 26, 26), { line: 26, endLine: 26 });
    const gone: PlacementLookup = { citation: () => ({ kind: 'gone', location: { uri: RL, line: 29, endLine: 37 } }), edit: () => undefined };
    assert.deepEqual(mentionFollower(sampleResult(), gone)('src/rate_limit.rs', 26, 26), { line: 26, endLine: 26 });
  });

  it('link to and read the lines where the cited text is now, in text and in code', () => {
    const thread = new Thread('c');
    const exchange = thread.start('q');
    thread.complete(exchange, sampleResult({ answer: 'See src/rate_limit.rs:26 and `src/rate_limit.rs:30-32`, not src/rate_limit.rs:60.' }));
    const html = renderExchange(exchange, { editsApplicable: true, placements: moved });
    assert.ok(html.includes(`<a href="${RL}#L29">src/rate_limit.rs:29</a>`), html);
    assert.ok(html.includes(`<a href="${RL}#L33-L35"><code>src/rate_limit.rs:33-35</code></a>`), html);
    assert.ok(html.includes(`<a href="${RL}#L60">src/rate_limit.rs:60</a>`), html);
  });
});

describe('an answer over several roots (paths under each folder\'s name)', () => {
  // The same path in two folders, as the server shows them: `<root name>/<path>`.
  const GATEWAY = 'file:///work/gateway/src/config.rs';
  const TOLLBOOTH = 'file:///work/tollbooth/src/config.rs';
  const base = sampleResult().citations[0];
  const result = sampleResult({
    answer: 'Read in tollbooth/src/config.rs:14, not gateway/src/config.rs:14 nor src/config.rs:14.',
    citations: [
      { ...base, uri: GATEWAY, path: 'gateway/src/config.rs', line: 12, endLine: 18 },
      { ...base, uri: TOLLBOOTH, path: 'tollbooth/src/config.rs', line: 12, endLine: 18 },
    ],
    edits: [],
  });

  it('links each mention and citation to its own folder\'s file', () => {
    const html = renderAnswerHtml('q', result);
    assert.ok(html.includes(`Read in <a href="${TOLLBOOTH}#L14">tollbooth/src/config.rs:14</a>`), html);
    assert.ok(html.includes(`not <a href="${GATEWAY}#L14">gateway/src/config.rs:14</a>`), html);
    // Without a folder's name the path is in neither root: it is left as text.
    assert.ok(html.includes('nor src/config.rs:14.'), html);
    assert.ok(html.includes(`<a href="${TOLLBOOTH}#L12-L18">tollbooth/src/config.rs:12-18</a>`), html);
  });

  it('moves a mention with its own folder\'s citation only', () => {
    const moved: PlacementLookup = {
      citation: (i) => (i === 1 ? { kind: 'followed', location: { uri: TOLLBOOTH, line: 13, endLine: 19 } } : undefined),
      edit: () => undefined,
    };
    const follow = mentionFollower(result, moved);
    assert.deepEqual(follow('tollbooth/src/config.rs', 14, 14), { line: 15, endLine: 15 });
    assert.deepEqual(follow('gateway/src/config.rs', 14, 14), { line: 14, endLine: 14 });
  });
});

describe('answerMarkdown', () => {
  const md = answerMarkdown(sampleResult());

  it('carries the answer', () => {
    assert.ok(md.startsWith('Tokens are refilled lazily'), md);
  });

  it('links verified citations to their lines, with the note', () => {
    assert.ok(md.includes(`1. [src/rate\\_limit.rs:26-34](${RL}#L26-L34) — refill`), md);
  });

  it('does not link unverified citations', () => {
    assert.ok(md.includes('2. src/missing.rs:1 _(not found in the workspace)_'), md);
  });

  it('follows a citation to where its text is now, and says when it is gone', () => {
    const moved = answerMarkdown(sampleResult(), {
      citation: (i) => (i === 0 ? { kind: 'followed', location: { uri: RL, line: 27, endLine: 35 } } : undefined),
      edit: () => undefined,
    });
    assert.ok(moved.includes(`1. [src/rate\\_limit.rs:27-35](${RL}#L27-L35) — refill`), moved);
    const gone = answerMarkdown(sampleResult(), {
      citation: (i) => (i === 0 ? { kind: 'gone', location: { uri: RL, line: 26, endLine: 34 } } : undefined),
      edit: () => undefined,
    });
    assert.ok(gone.includes('_(the cited text has changed since)_'), gone);
  });

  it('explains why an answer stopped early', () => {
    assert.match(answerMarkdown(sampleResult({ stopReason: 'max_steps' })), /copilot-ls\.maxSteps/);
    // A no-model answer says so itself (the server's text): once, not twice.
    const noModel = 'No model is configured, so this answer lists the places in the workspace that best match.';
    const md = answerMarkdown(sampleResult({ stopReason: 'no_provider', answer: noModel }));
    assert.equal(md.split('No model is configured').length - 1, 1, md);
    assert.doesNotMatch(md, /^> /m);
  });

  it('does not list a no-model answer\'s places twice', () => {
    assert.match(answerMarkdown(sampleResult()), /#### Citations/);
    const places = answerMarkdown(sampleResult({ stopReason: 'no_provider' }));
    assert.doesNotMatch(places, /#### Citations/);
  });
});

describe('renderAnswerHtml', () => {
  const html = renderAnswerHtml('How does refill work?', sampleResult());

  it('starts with the question', () => {
    assert.ok(html.includes('<h3 class="question">How does refill work?</h3>'), html);
  });

  it('lists suggested edits at their first line and the steps', () => {
    assert.ok(html.includes(`<b>Document refill</b> in <a href="${RL}#L35">src/rate_limit.rs:35</a>`), html);
    assert.ok(html.includes('<code>search_code</code> TokenBucket — 3 matches'), html);
    assert.ok(html.includes('<li class="step failed"><span class="mark">✗</span> <code>read_file</code> nope.rs — Error: no such file</li>'), html);
  });

  it('links path:line mentions of cited files, in text and in code', () => {
    assert.ok(html.includes(`at <a href="${RL}#L26">src/rate_limit.rs:26</a>.`), html);
    assert.ok(html.includes(`(<a href="${RL}#L35-L40">src/rate_limit.rs:35-40</a>)`), html);
    const code = renderAnswerHtml('q', sampleResult({ answer: 'see `src/rate_limit.rs:7`' }));
    assert.ok(code.includes(`<a href="${RL}#L7"><code>src/rate_limit.rs:7</code></a>`), code);
  });

  it('links the citation list', () => {
    assert.ok(html.includes(`<a href="${RL}#L26-L34">src/rate_limit.rs:26-34</a> — refill`), html);
  });

  it('leaves other paths and links alone', () => {
    const out = renderAnswerHtml('q', sampleResult({ answer: 'see src/config.rs:3 and [src/rate_limit.rs:9](https://x.test/a)' }));
    assert.ok(out.includes('see src/config.rs:3 and <a href="https://x.test/a">src/rate_limit.rs:9</a>'), out);
    const prefixed = renderAnswerHtml('q', sampleResult({ answer: 'vendor/src/rate_limit.rs:9' }));
    assert.ok(prefixed.includes('<p>vendor/src/rate_limit.rs:9</p>'), prefixed);
  });

  it('never lets the model inject HTML or script links', () => {
    const out = renderAnswerHtml('<img src=x>', sampleResult({ answer: '<script>alert(1)</script> [x](javascript:alert(1))' }));
    assert.doesNotMatch(out, /<script>|<img|href="javascript/);
    assert.ok(out.includes('&lt;script&gt;'));
  });
});

describe('editLocation', () => {
  it('reads the first edit of documentChanges or changes', () => {
    const e = sampleResult().edits[0];
    assert.equal(editLocation(e).line, 35);
    assert.equal(editLocation({ ...e, edit: { changes: { [e.uri]: [{ range: { start: { line: 4 } } }] } } }).line, 5);
    assert.equal(editLocation({ ...e, edit: { documentChanges: [{ kind: 'create', uri: e.uri }] } }).line, 1);
  });
});

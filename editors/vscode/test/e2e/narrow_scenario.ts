// What the scripted model answers in narrow_thread.e2e.test.ts, in order, and the
// questions that test asks: one step per model call.

/** Stopped with the thread's Stop button: its model call never answers. */
export const STOPPED_QUESTION = 'Will this run for long?';

/** Typed with Shift+Enter: its second line must not reach the Problems panel. */
export const MULTILINE_QUESTION =
  'Where is the burst read?\nAnswer with the lines that parse it, and say what happens to a malformed value in each case.';

export const LONG_QUESTION = 'Tell me everything about the bucket.';
export const LONG_ANSWER_END = 'That is all there is to the bucket.';

// An edit whose lines are far wider than a 400 px column.
export const READ_OLD = '    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)\n';
export const READ_NEW =
  '    // An unset, empty or malformed variable falls back to the default instead of failing the start.\n' +
  '    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)\n';

/** Fourteen paragraphs: taller than the panel, streamed word by word. */
export const LONG_ANSWER =
  Array.from(
    { length: 14 },
    (_, i) =>
      `Part ${i + 1}. The bucket starts full, and every request takes one token from it; when it is empty ` +
      'the request is refused until the refill, which runs lazily on the next request, has added enough tokens again.',
  ).join('\n\n') + `\n\n${LONG_ANSWER_END}`;

/** A file deep enough that its citation link is far wider than a 260 px thread. */
export const DEEP_PATH = 'src/connection/adapters/retry_policies/exponential_backoff_with_jitter_configuration.rs';
export const DEEP_QUESTION = 'Where is the backoff configured?';

export const NARROW_SCRIPT = {
  steps: [
    { hang: true },
    {
      tool_calls: [
        {
          id: 'call_n1',
          name: 'propose_edit',
          arguments: { path: 'src/config.rs', old_text: READ_OLD, new_text: READ_NEW, title: 'Say why a bad value falls back' },
        },
      ],
    },
    {
      tool_calls: [
        {
          id: 'call_n2',
          name: 'answer',
          arguments: {
            answer: 'The burst is read by `read` (src/config.rs:21), which falls back to the default.',
            // No note: the diagnostic's message is the extension's own.
            citations: [{ path: 'src/config.rs', line: 21, end_line: 23 }],
          },
        },
      ],
    },
    { text: LONG_ANSWER, chunk_delay_ms: 10 },
    {
      tool_calls: [
        {
          id: 'call_n3',
          name: 'answer',
          arguments: {
            answer: `The backoff is configured in ${DEEP_PATH}:1.`,
            citations: [{ path: DEEP_PATH, line: 1, end_line: 3, note: 'the backoff' }],
          },
        },
      ],
    },
  ],
};

// What the end-to-end test's scripted model answers, in order, and the texts its edits
// change: one step per model call, consumed by the asks of vscode.e2e.test.ts.

export const QUESTION = 'How does the rate limiter refill its tokens?';
export const FOLLOW_UP = 'And where are its limits configured?';
export const OLD_TEXT = '    fn refill(&mut self) {\n';
export const NEW_TEXT = '    /// Adds the tokens earned since the last refill, up to capacity.\n    fn refill(&mut self) {\n';

export const STREAMED =
  'Streaming answer: the bucket refills lazily, adding the elapsed time multiplied by the refill rate, ' +
  'capped at its capacity, every time a request tries to take a token, so idle buckets cost nothing at all.';
export const CONFIG_OLD = '    pub port: u16,\n';
export const CONFIG_NEW = '    /// The port to listen on.\n    pub port: u16,\n';
// An edit to a file no step opens before it is applied from the thread.
export const NOTES_OLD = '- Tests for the token bucket are still missing.\n';
export const NOTES_NEW = '- Tests for the token bucket are still missing (see issue 7).\n';

export const SCRIPT = {
  steps: [
    { tool_calls: [{ id: 'call_1', name: 'search_code', arguments: { pattern: 'TokenBucket' } }] },
    {
      // Slow enough for the thread to show the first tool step while the next call waits,
      // also on a loaded machine while the answer view opens.
      delay_ms: 3000,
      text: 'Reading the bucket and proposing doc comments.',
      tool_calls: [
        { id: 'call_2', name: 'read_file', arguments: { path: 'src/rate_limit.rs', start_line: 1, end_line: 40 } },
        {
          id: 'call_3',
          name: 'propose_edit',
          arguments: { path: 'src/rate_limit.rs', old_text: OLD_TEXT, new_text: NEW_TEXT, title: 'Document refill' },
        },
        {
          id: 'call_3b',
          name: 'propose_edit',
          arguments: { path: 'src/config.rs', old_text: CONFIG_OLD, new_text: CONFIG_NEW, title: 'Document port' },
        },
        {
          id: 'call_3c',
          name: 'propose_edit',
          arguments: { path: 'docs/notes.md', old_text: NOTES_OLD, new_text: NOTES_NEW, title: 'Update the notes' },
        },
      ],
    },
    {
      tool_calls: [
        {
          id: 'call_4',
          name: 'answer',
          arguments: {
            answer:
              'Tokens are refilled lazily: `try_acquire` calls `refill` first (src/rate_limit.rs:26), ' +
              'which adds `elapsed * refill_per_sec` tokens, capped at `capacity`; the burst comes from ' +
              '`Config::from_env` (src/config.rs:12).\n\n' +
              '```rust\nfn refill(&mut self) {\n    let now = Instant::now();\n}\n```',
            citations: [
              { path: 'src/rate_limit.rs', line: 26, end_line: 34, note: 'refill before taking a token' },
              { path: 'src/config.rs', line: 12, end_line: 18, note: 'burst and rate come from the environment' },
            ],
          },
        },
      ],
    },
    { text: 'Follow-up answer: the limits come from `TOLLBOOTH_BURST` and `TOLLBOOTH_RPS` in src/config.rs:11.' },
    { text: 'Selection answer: `refill` adds the tokens earned since src/rate_limit.rs:37.' },
    // A slow model: the answer streams word by word.
    { text: STREAMED, chunk_delay_ms: 80 },
    { hang: true },
    { text: 'Second answer, while the first still runs.' },
    { hang: true },
    { status: 401, body: '{"error":{"message":"Incorrect API key provided"}}' },
  ],
};

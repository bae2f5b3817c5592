// What the scripted language model (test/lm_provider) answers in editor_model.e2e.test.ts:
// a tool call, then the answer, for the thread's question and for the chat's.

/** Asked from the palette: answered in the thread by the editor's model. */
export const THREAD_QUESTION = 'Where is the burst read from the environment?';
/** Asked of @copilot-ls in the Chat view. */
export const CHAT_QUESTION = 'How does the bucket refill its tokens?';
/** Asked next in the same chat: it continues the chat's conversation. */
export const CHAT_FOLLOW_UP = 'And where is its capacity set?';
export const CHAT_FOLLOW_UP_ANSWER = 'Follow-up from the editor model: the capacity comes from the config.';

export const READ_OLD = '    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)\n';
export const READ_NEW = '    // A malformed value falls back to the default.\n' + READ_OLD;
export const REFILL_OLD = '    fn refill(&mut self) {\n';
export const REFILL_NEW = '    /// Adds the tokens earned since the last refill, up to capacity.\n' + REFILL_OLD;

export const THREAD_ANSWER = 'The editor model says: the burst is read by `read` (src/config.rs:21), which falls back to the default.';
export const CHAT_ANSWER = 'The editor model says: `try_acquire` calls `refill` first (src/rate_limit.rs:26).';

export const EDITOR_MODEL_SCRIPT = [
  {
    when: THREAD_QUESTION,
    turns: [
      {
        text: 'Reading how the burst is parsed. ',
        tool_calls: [
          { id: 'lm_1', name: 'propose_edit', arguments: { path: 'src/config.rs', old_text: READ_OLD, new_text: READ_NEW, title: 'Say why a bad value falls back' } },
        ],
      },
      {
        tool_calls: [
          {
            id: 'lm_2',
            name: 'answer',
            // No note: the Problems panel's row is the extension's own.
            arguments: { answer: THREAD_ANSWER, citations: [{ path: 'src/config.rs', line: 21, end_line: 23 }] },
          },
        ],
      },
    ],
  },
  {
    when: CHAT_QUESTION,
    turns: [
      {
        tool_calls: [
          { id: 'lm_3', name: 'propose_edit', arguments: { path: 'src/rate_limit.rs', old_text: REFILL_OLD, new_text: REFILL_NEW, title: 'Document refill' } },
        ],
      },
      {
        tool_calls: [
          {
            id: 'lm_4',
            name: 'answer',
            arguments: { answer: CHAT_ANSWER, citations: [{ path: 'src/rate_limit.rs', line: 26, end_line: 34, note: 'refill before taking a token' }] },
          },
        ],
      },
    ],
  },
  {
    when: CHAT_FOLLOW_UP,
    turns: [{ tool_calls: [{ id: 'lm_5', name: 'answer', arguments: { answer: CHAT_FOLLOW_UP_ANSWER, citations: [] } }] }],
  },
];

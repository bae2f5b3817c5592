// What the scripted model answers in multi_root.e2e.test.ts, in order, and the folders
// and texts that test uses: one step per model call. With several roots every path the
// model sees and sends is `<root name>/<path in the root>` (docs/protocol.md section 10),
// so the script names the second folder's files under its name.

/** The window's folders, in order: both copies of the fixture, so each path is in both. */
export const FIRST = 'gateway';
export const SECOND = 'tollbooth';
/** A third copy, added to the window's workspace file and removed again by the test. */
export const ADDED = 'ledger';

export const QUESTION = `How does the bucket in ${SECOND} refill its tokens?`;
export const ADDED_QUESTION = `What does ${ADDED} start with?`;

export const CONFIG_OLD = '    pub port: u16,\n';
export const CONFIG_NEW = '    /// The port the second folder listens on.\n    pub port: u16,\n';

const addedAnswer = {
  tool_calls: [
    {
      id: 'call_m4',
      name: 'answer',
      arguments: {
        answer: `It starts in \`main\` (${ADDED}/src/main.rs:6).`,
        citations: [{ path: `${ADDED}/src/main.rs`, line: 6, end_line: 12, note: 'the entry point of the added folder' }],
      },
    },
  ],
};

export const MULTI_ROOT_SCRIPT = {
  steps: [
    {
      tool_calls: [
        { id: 'call_m1', name: 'read_file', arguments: { path: `${SECOND}/src/rate_limit.rs`, start_line: 20, end_line: 40 } },
        {
          id: 'call_m2',
          name: 'propose_edit',
          arguments: { path: `${SECOND}/src/config.rs`, old_text: CONFIG_OLD, new_text: CONFIG_NEW, title: 'Document the port' },
        },
      ],
    },
    {
      tool_calls: [
        {
          id: 'call_m3',
          name: 'answer',
          arguments: {
            answer: `The bucket refills lazily in \`refill\` (${SECOND}/src/rate_limit.rs:35), before each token is taken.`,
            citations: [
              { path: `${SECOND}/src/rate_limit.rs`, line: 26, end_line: 34, note: 'refill before taking a token' },
              { path: `${SECOND}/src/config.rs`, line: 12, end_line: 18, note: 'the limits come from the environment' },
            ],
          },
        },
      ],
    },
    { text: 'Selection answer: this is the second folder\'s bucket.' },
    // The same answer twice: once the folder is in the window, once it was removed.
    addedAnswer,
    addedAnswer,
  ],
};

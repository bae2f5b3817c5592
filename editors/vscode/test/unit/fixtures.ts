// A realistic AskResult for the tollbooth fixture workspace, as the server would send it.

import type { AskResult } from '../../src/protocol';

export const ROOT = 'file:///work/tollbooth';

export function sampleResult(overrides: Partial<AskResult> = {}): AskResult {
  return {
    conversationId: 'conv-1',
    answer:
      'Tokens are refilled lazily in `refill` (src/rate_limit.rs:35-40), called from ' +
      '`try_acquire` at src/rate_limit.rs:26.',
    citations: [
      {
        uri: `${ROOT}/src/rate_limit.rs`,
        range: { start: { line: 25, character: 0 }, end: { line: 34, character: 0 } },
        path: 'src/rate_limit.rs',
        line: 26,
        endLine: 34,
        note: 'refill',
        verified: true,
      },
      {
        uri: `${ROOT}/src/missing.rs`,
        range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } },
        path: 'src/missing.rs',
        line: 1,
        endLine: 1,
        verified: false,
      },
    ],
    edits: [
      {
        id: 'edit-1',
        title: 'Document refill',
        path: 'src/rate_limit.rs',
        uri: `${ROOT}/src/rate_limit.rs`,
        edit: {
          documentChanges: [
            {
              textDocument: { uri: `${ROOT}/src/rate_limit.rs`, version: 3 },
              edits: [{ range: { start: { line: 34, character: 4 }, end: { line: 34, character: 27 } }, newText: 'x' }],
            },
          ],
        },
      },
    ],
    steps: [
      { tool: 'search_code', arguments: { pattern: 'TokenBucket' }, ok: true, summary: '3 matches' },
      { tool: 'read_file', arguments: { path: 'nope.rs' }, ok: false, summary: 'Error: no such file' },
    ],
    stopReason: 'answered',
    ...overrides,
  };
}

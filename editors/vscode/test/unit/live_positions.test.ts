// LivePositions: citations and edits following the server's republished diagnostics.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LivePositions, type OurDiagnostic } from '../../src/live_positions';
import { ROOT, sampleResult } from './fixtures';

const RL = `${ROOT}/src/rate_limit.rs`;

function result() {
  const base = sampleResult();
  return sampleResult({
    citations: [
      base.citations[0],
      { ...base.citations[0], line: 50, endLine: 52, note: undefined },
      { ...base.citations[0], line: 60, endLine: 60, note: undefined },
    ],
  });
}

const cite = (line: number, message: string): OurDiagnostic => ({ code: 'citation', line, message });

describe('LivePositions', () => {
  it('keeps the AskResult lines until the server republishes', () => {
    const p = new LivePositions(result(), 'How?');
    assert.deepEqual(p.citation(0), { kind: 'original', location: { uri: RL, line: 26, endLine: 34 } });
    assert.equal(p.update(RL, []), false, 'nothing seen yet: not gone');
    assert.equal(p.citation(0)?.kind, 'original');
  });

  it('follows each citation to its republished first line, keeping its length', () => {
    const p = new LivePositions(result(), 'How?');
    assert.equal(p.update(RL, [cite(26, 'refill'), cite(50, 'How?'), cite(61, 'How?')]), true);
    assert.deepEqual(p.citation(0), { kind: 'followed', location: { uri: RL, line: 27, endLine: 35 } });
    assert.deepEqual(p.citation(1)?.location, { uri: RL, line: 51, endLine: 53 });
    assert.deepEqual(p.citation(2)?.location, { uri: RL, line: 62, endLine: 62 });
    assert.equal(p.update(RL, [cite(26, 'refill'), cite(50, 'How?'), cite(61, 'How?')]), false, 'no change the second time');
  });

  it('matches a citation without a note by the short message the extension shows for it', () => {
    const p = new LivePositions(result(), 'How?\nIn detail.');
    const short = 'Cited in the answer to: How? …';
    assert.equal(p.update(RL, [cite(26, 'refill'), cite(50, short), cite(61, short)]), true);
    assert.deepEqual(p.citation(1)?.location, { uri: RL, line: 51, endLine: 53 });
    assert.deepEqual(p.citation(2)?.location, { uri: RL, line: 62, endLine: 62 });
  });

  it('marks a citation gone when its diagnostic was seen and is dropped', () => {
    const p = new LivePositions(result(), 'How?');
    p.update(RL, [cite(25, 'refill'), cite(49, 'How?'), cite(59, 'How?')]);
    p.update(RL, [cite(49, 'How?'), cite(59, 'How?')]);
    assert.equal(p.citation(0)?.kind, 'gone');
    assert.deepEqual(p.citation(0)?.location, { uri: RL, line: 26, endLine: 34 }, 'last known place');
    assert.equal(p.citation(1)?.location.line, 50);
  });

  it('takes the citation and its lines from the diagnostic\'s data when the server sends it', () => {
    const p = new LivePositions(result(), 'How?');
    // Out of order, and a citation that now covers one line more: data wins over messages.
    const data = (index: number, line: number, endLine: number): OurDiagnostic => ({ code: 'citation', line: line - 1, message: 'How?', citation: { index, line, endLine } });
    p.update(RL, [data(2, 70, 70), data(0, 30, 39)]);
    assert.deepEqual(p.citation(0)?.location, { uri: RL, line: 30, endLine: 39 });
    assert.equal(p.citation(1)?.kind, 'original', 'not published: unseen');
    assert.deepEqual(p.citation(2)?.location, { uri: RL, line: 70, endLine: 70 });
    p.update(RL, [data(0, 30, 39)]);
    assert.equal(p.citation(2)?.kind, 'gone');
  });

  it('ignores other documents and other diagnostics', () => {
    const p = new LivePositions(result(), 'How?', (u) => u.toLowerCase());
    assert.deepEqual(p.uris(), [RL.toLowerCase()]);
    assert.equal(p.update(`${ROOT}/src/config.rs`, [cite(1, 'refill')]), false);
    assert.equal(p.update(RL.toUpperCase(), [{ code: 'suggested-edit', line: 3, message: 'refill' }]), false);
  });

  it('follows a suggested edit by its id and notices when it is gone', () => {
    const r = result();
    const p = new LivePositions(r, 'How?', (u) => u, new Map([['edit-1', { uri: RL, line: 35, endLine: 35 }]]));
    assert.equal(p.edit('edit-1')?.kind, 'original');
    p.update(RL, [{ code: 'suggested-edit', line: 36, message: 'Document refill', editId: 'edit-1' }]);
    assert.deepEqual(p.edit('edit-1'), { kind: 'followed', location: { uri: RL, line: 37, endLine: 37 } });
    p.update(RL, []);
    assert.equal(p.edit('edit-1')?.kind, 'gone');
  });
});

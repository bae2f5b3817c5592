// What one running ask is doing right now, in the words the progress notification, the
// status item and the thread all use: waiting for the model, running a tool step, or
// the model writing. Pure.

import type { WorkDoneValue } from './progress_report';
import type { AskDelta } from './protocol';

export type AskPhase =
  | { kind: 'waiting' }
  | { kind: 'tool'; step: number; message: string }
  | { kind: 'writing' };

export const WAITING: AskPhase = { kind: 'waiting' };

export function phaseText(phase: AskPhase): string {
  switch (phase.kind) {
    case 'waiting':
      return 'waiting for the model';
    case 'tool':
      return `step ${phase.step}: ${phase.message}`;
    case 'writing':
      return 'the model is writing';
  }
}

export type AskEvent = { kind: 'work'; value: WorkDoneValue } | { kind: 'delta'; delta: AskDelta };

/**
 * The phase after `event`. The server reports a tool call when it starts (`$/progress`
 * report on the workDoneToken) and, when streaming, the finished step as an AskDelta; after
 * a finished step the next model call is pending, so the phase goes back to waiting rather
 * than keep naming the last tool. Its own `begin` message ("Thinking") is not shown: the
 * wording stays ours.
 */
export function nextPhase(phase: AskPhase, event: AskEvent, stepsSoFar: number): AskPhase {
  if (event.kind === 'work') {
    if (event.value.kind === 'report' && event.value.message) {
      return { kind: 'tool', step: stepsSoFar, message: event.value.message };
    }
    return phase;
  }
  if (event.delta.step) {
    return WAITING;
  }
  if (event.delta.text) {
    return { kind: 'writing' };
  }
  return phase;
}

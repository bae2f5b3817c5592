// The asks running at once, so that the status item stays busy until the last one ends
// (a finished ask must not make it idle while another still runs). Pure.

import { phaseText, WAITING, type AskPhase } from './ask_phase';

export interface RunningAsk {
  question: string;
  phase: AskPhase;
}

export class AskActivity {
  private next = 1;
  private readonly running = new Map<number, RunningAsk>();

  constructor(private readonly changed: () => void = () => undefined) {}

  /** Registers an ask; the returned handle updates its phase and ends it (once). */
  begin(question: string): { update(phase: AskPhase): void; end(): void } {
    const id = this.next++;
    this.running.set(id, { question, phase: WAITING });
    this.changed();
    return {
      update: (phase) => {
        const ask = this.running.get(id);
        // Every streamed delta updates the phase; only a change of wording is news (each
        // status item update is a message to the workbench, competing with the text).
        if (ask && phaseText(ask.phase) !== phaseText(phase)) {
          ask.phase = phase;
          this.changed();
        }
      },
      end: () => {
        if (this.running.delete(id)) {
          this.changed();
        }
      },
    };
  }

  get count(): number {
    return this.running.size;
  }

  /** One line per running ask, oldest first: `"question": waiting for the model`. */
  describe(): string[] {
    return [...this.running.values()].map((a) => `"${a.question}": ${phaseText(a.phase)}`);
  }
}

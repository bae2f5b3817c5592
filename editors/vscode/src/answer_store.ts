// The current thread and where its answers' citations and edits are now: what the
// answer view, "Follow Up", the citation tree and "Go to Citation" read. The last answer's
// places follow the server's republished diagnostics; an earlier answer's keep where they
// were last seen (the server republishes only the last answer's). Pure, with plain
// listeners.

import { editLocation, type Location } from './answer_markdown';
import { newConversationId } from './ask_params';
import { LivePositions } from './live_positions';
import type { AskResult } from './protocol';
import { Thread, type Exchange } from './thread';

export interface Answer {
  question: string;
  result: AskResult;
}

/** What changed: one exchange (the view re-renders only it), or everything. */
export interface StoreChange {
  exchange?: Exchange;
  /** When the `$/progress` that caused the change arrived (Date.now()), if one did. */
  arrivedAt?: number;
}

export class AnswerStore {
  private current_ = new Thread(newConversationId());
  private positions_: LivePositions | undefined;
  /** Every answered exchange's places; the last answer's is `positions_`. */
  private readonly placed = new Map<Exchange, LivePositions>();
  private readonly listeners = new Set<(change: StoreChange) => void>();

  /** `normalize` maps URIs to the form diagnostics are keyed by (see LivePositions). */
  constructor(private readonly normalize: (uri: string) => string = (u) => u) {}

  get thread(): Thread {
    return this.current_;
  }

  /** The last answer of the thread (the one whose diagnostics the server publishes). */
  get current(): Answer | undefined {
    const last = this.current_.lastAnswered;
    return last?.result ? { question: last.question, result: last.result } : undefined;
  }

  get positions(): LivePositions | undefined {
    return this.positions_;
  }

  /** Where an exchange's citations and edits are now (or were last seen). */
  positionsOf(exchange: Exchange): LivePositions | undefined {
    return this.placed.get(exchange);
  }

  /** The conversation the thread continues. */
  get conversationId(): string | undefined {
    return this.current_.conversationId;
  }

  /** Starts a new conversation; the old thread's running asks no longer show. */
  newThread(): Thread {
    this.current_ = new Thread(newConversationId());
    this.positions_ = undefined;
    this.placed.clear();
    this.emit({});
    return this.current_;
  }

  /** Tells the listeners that `exchange` changed (ignored when it left the thread). */
  changed(exchange: Exchange, arrivedAt?: number): void {
    if (this.current_.has(exchange)) {
      this.emit({ exchange, arrivedAt });
    }
  }

  /** Settles `exchange` with its reply; its citations become the ones followed. */
  complete(thread: Thread, exchange: Exchange, result: AskResult): void {
    thread.complete(exchange, result);
    if (thread !== this.current_) {
      return;
    }
    const edits = new Map<string, Location>(result.edits.map((e) => [e.id, editLocation(e)]));
    this.positions_ = new LivePositions(result, exchange.question, this.normalize, edits);
    this.placed.set(exchange, this.positions_);
    // The earlier exchanges lose their Apply buttons; their links stay where they were
    // last followed: re-render all.
    this.emit({});
  }

  /** Re-renders the last answer after its placements moved. */
  placementsChanged(): void {
    const last = this.current_.lastAnswered;
    if (last) {
      this.emit({ exchange: last });
    }
  }

  clear(): void {
    this.newThread();
  }

  onDidChange(listener: (change: StoreChange) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private emit(change: StoreChange): void {
    for (const l of this.listeners) {
      l(change);
    }
  }
}

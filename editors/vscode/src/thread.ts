// The conversation as a thread: one exchange per question, each built up from the
// AskDeltas streamed while it runs and settled by its AskResult. Pure, so the delta
// handling is unit tested without VS Code; the answer view only renders it.

import { WAITING, nextPhase, type AskEvent, type AskPhase } from './ask_phase';
import type { ErrorAction } from './errors';
import type { AskDelta, AskResult, Step } from './protocol';

/** One model call of an ask: the text it wrote and the tool calls it made. */
export interface ModelTurn {
  turn: number;
  text: string;
  steps: Step[];
}

export type ExchangeState = 'running' | 'answered' | 'failed' | 'cancelled';

export interface Exchange {
  /** Unique in the thread; the view keys its sections by it. */
  id: number;
  question: string;
  state: ExchangeState;
  phase: AskPhase;
  /** As streamed; filled from `result.steps` when the server did not stream. */
  turns: ModelTurn[];
  result?: AskResult;
  error?: string;
  /** What fixes the error (Open Settings, Restart Server): buttons under it. */
  errorActions?: ErrorAction[];
  /** Whether any delta arrived (a server without streaming sends none). */
  streamed: boolean;
  /**
   * The editor's model that answered (its name and vendor), when the editor's model did;
   * `notice` is the one-time note on what went to its provider.
   */
  answeredBy?: { model: string; notice?: string };
}

export class Thread {
  private nextId = 1;
  private steps = new Map<number, number>();
  readonly exchanges: Exchange[] = [];
  /** The server's conversation; follow-ups reuse it. */
  conversationId: string | undefined;

  constructor(conversationId?: string) {
    this.conversationId = conversationId;
  }

  get running(): boolean {
    return this.exchanges.some((e) => e.state === 'running');
  }

  /** The last exchange that has an AskResult (its citations are the current ones). */
  get lastAnswered(): Exchange | undefined {
    for (let i = this.exchanges.length - 1; i >= 0; i--) {
      if (this.exchanges[i].result) {
        return this.exchanges[i];
      }
    }
    return undefined;
  }

  start(question: string): Exchange {
    const exchange: Exchange = { id: this.nextId++, question, state: 'running', phase: WAITING, turns: [], streamed: false };
    this.exchanges.push(exchange);
    this.steps.set(exchange.id, 0);
    return exchange;
  }

  has(exchange: Exchange): boolean {
    return this.exchanges.includes(exchange);
  }

  /** A `$/progress` report on the workDoneToken (a tool call starting). */
  applyWork(exchange: Exchange, event: Extract<AskEvent, { kind: 'work' }>): void {
    if (exchange.state !== 'running') {
      return;
    }
    if (event.value.kind === 'report' && event.value.message) {
      this.steps.set(exchange.id, (this.steps.get(exchange.id) ?? 0) + 1);
    }
    exchange.phase = nextPhase(exchange.phase, event, this.steps.get(exchange.id) ?? 0);
  }

  /** An AskDelta: text appended to its turn, or a finished step of that turn. */
  applyDelta(exchange: Exchange, delta: AskDelta): void {
    if (exchange.state !== 'running' || !Number.isInteger(delta.turn) || delta.turn < 1) {
      return;
    }
    exchange.streamed = true;
    const turn = turnOf(exchange, delta.turn);
    if (typeof delta.text === 'string') {
      turn.text += delta.text;
    }
    if (delta.step) {
      turn.steps.push(delta.step);
    }
    exchange.phase = nextPhase(exchange.phase, { kind: 'delta', delta }, this.steps.get(exchange.id) ?? 0);
  }

  /** The reply: its `answer` replaces the streamed answer text (it is authoritative). */
  complete(exchange: Exchange, result: AskResult): void {
    exchange.result = result;
    exchange.state = result.stopReason === 'cancelled' ? 'cancelled' : 'answered';
    if (!exchange.streamed || exchange.turns.length === 0) {
      exchange.turns = turnsFromSteps(result.steps);
    }
    this.conversationId = result.conversationId;
  }

  fail(exchange: Exchange, message: string, actions: ErrorAction[] = []): void {
    exchange.state = 'failed';
    exchange.error = message;
    exchange.errorActions = actions;
  }

  cancel(exchange: Exchange): void {
    exchange.state = 'cancelled';
  }
}

function turnOf(exchange: Exchange, number: number): ModelTurn {
  let turn = exchange.turns.find((t) => t.turn === number);
  if (!turn) {
    turn = { turn: number, text: '', steps: [] };
    exchange.turns.push(turn);
    exchange.turns.sort((a, b) => a.turn - b.turn);
  }
  return turn;
}

/**
 * Rebuilds the model turns of a reply that did not stream: a step carrying a `thought`
 * opens a new turn (it is the first step of its turn); steps without one join the current
 * turn. Turn numbers are only an order here.
 */
export function turnsFromSteps(steps: Step[]): ModelTurn[] {
  const turns: ModelTurn[] = [];
  for (const step of steps) {
    const current = turns[turns.length - 1];
    if (!current || step.thought !== undefined) {
      turns.push({ turn: turns.length + 1, text: step.thought ?? '', steps: [step] });
    } else {
      current.steps.push(step);
    }
  }
  return turns;
}

/** How one turn shows in the thread. */
export type TurnView =
  /** Text followed by tool calls: the model's reasoning, collapsed, with its steps. */
  | { kind: 'reasoning'; turn: ModelTurn }
  /** Text with no tool calls (yet): shown open, as it streams; it may be the answer. */
  | { kind: 'streaming'; turn: ModelTurn }
  /** Tool calls without text: only their progress lines. */
  | { kind: 'steps'; turn: ModelTurn };

/**
 * The turns to show for an exchange. Once the reply is in, the answer is `result.answer`,
 * so the turn that wrote it shows only its steps (its streamed text would repeat it).
 */
export function turnViews(exchange: Exchange): TurnView[] {
  const views: TurnView[] = [];
  const answered = exchange.result !== undefined && exchange.result.stopReason === 'answered';
  exchange.turns.forEach((turn, i) => {
    const last = i === exchange.turns.length - 1;
    const text = turn.text.trim() !== '';
    if (answered && last && exchange.streamed) {
      if (turn.steps.length > 0) views.push({ kind: 'steps', turn });
      return;
    }
    if (turn.steps.length > 0) {
      views.push({ kind: text ? 'reasoning' : 'steps', turn });
    } else if (text && !exchange.result) {
      views.push({ kind: 'streaming', turn });
    } else if (text) {
      // A finished ask's turn without calls that is not the answer (max_steps): reasoning.
      views.push({ kind: 'reasoning', turn });
    }
  });
  return views;
}

/**
 * The live side of task and step output: every chunk the line router
 * delivers to a task (or a pipeline step) is published here once the store
 * has it, so a watcher (the web console's server-sent events) sees the
 * lines as they arrive instead of polling the store.
 *
 * Each chunk carries its offset in the record's output (the length of
 * everything published before it for that task or step). Publishing after
 * the append makes a watcher that subscribes first and then reads the stored
 * output exact: a chunk published before it subscribed is in what it read,
 * and one published after carries an offset telling whether the read
 * already held it — nothing shown twice, nothing lost.
 */
import { EventEmitter } from 'eventemitter3';

export interface OutputChunk {
  readonly execId: string;
  /** task_id or step_id. */
  readonly id: string;
  readonly offset: number;
  readonly text: string;
}

export class OutputFeed {
  readonly #events = new EventEmitter<Record<string, [OutputChunk]>>();
  readonly #offsets = new Map<string, number>();

  publish(execId: string, id: string, text: string): void {
    const key = `${execId}\u0000${id}`;
    const offset = this.#offsets.get(key) ?? 0;
    this.#offsets.set(key, offset + text.length);
    this.#events.emit(execId, { execId, id, offset, text });
  }

  /** Listens to one execution's chunks; returns the unsubscribe. */
  subscribe(execId: string, listener: (c: OutputChunk) => void): () => void {
    this.#events.on(execId, listener);
    return () => void this.#events.off(execId, listener);
  }

  /** Forgets an execution's offsets once it has ended (its output no longer grows). */
  forget(execId: string): void {
    for (const key of this.#offsets.keys()) if (key.startsWith(`${execId}\u0000`)) this.#offsets.delete(key);
  }
}

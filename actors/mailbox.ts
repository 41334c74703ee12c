/**
 * A tiny run-to-completion FIFO mailbox (after xstate's Mailbox): a message
 * posted while another is being handled is queued and handled after it, never
 * re-entrantly. That is what lets an actor's handler apply effects that post
 * new messages (a synchronous executor, an event listener calling `cancel()`)
 * without seeing its own state change underneath it.
 *
 * A handler that throws does not wedge the mailbox: the error goes to
 * `onError` and the next message is handled.
 */

interface Slot<M> {
  readonly message: M;
  next: Slot<M> | undefined;
}

export type MailboxHandler<M> = (message: M) => void;
export type MailboxErrorHandler<M> = (error: unknown, message: M) => void;

export class Mailbox<M> {
  #head: Slot<M> | undefined;
  #tail: Slot<M> | undefined;
  #size = 0;
  #draining = false;
  readonly #handle: MailboxHandler<M>;
  readonly #onError: MailboxErrorHandler<M>;

  constructor(handle: MailboxHandler<M>, onError?: MailboxErrorHandler<M>) {
    this.#handle = handle;
    this.#onError =
      onError ??
      ((error) => {
        // No owner asked to hear about it: surface it rather than lose it.
        queueMicrotask(() => {
          throw error;
        });
      });
  }

  /** Messages waiting (not counting the one being handled). */
  get size(): number {
    return this.#size;
  }

  /** Enqueues `message`; handles it now unless a message is already being handled. */
  post(message: M): void {
    const slot: Slot<M> = { message, next: undefined };
    if (this.#tail) this.#tail.next = slot;
    else this.#head = slot;
    this.#tail = slot;
    this.#size++;
    if (!this.#draining) this.#drain();
  }

  #drain(): void {
    this.#draining = true;
    try {
      while (this.#head) {
        const slot = this.#head;
        this.#head = slot.next;
        if (!this.#head) this.#tail = undefined;
        this.#size--;
        try {
          this.#handle(slot.message);
        } catch (error) {
          this.#onError(error, slot.message);
        }
      }
    } finally {
      this.#draining = false;
    }
  }
}

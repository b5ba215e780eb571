/**
 * Word between the instances of a deployment (docs/design.md 18): a write on one instance (a key
 * created, a code redeemed) tells the others which kept answers it changed, so that no instance
 * serves the old ones. Carried by PostgreSQL's LISTEN/NOTIFY or Redis' pub/sub
 * (db/broadcast.ts); each instance hears the others' messages, never its own.
 */
export type Broadcast = {
  readonly kind: "postgres" | "redis";
  /** Sends a message to every other instance (best effort: one that is cut off misses it). */
  publish(message: string): Promise<void>;
  /** Tells every other instance that this one answers live requests (core/live-load.ts). */
  sayLive(): Promise<void>;
  close(): Promise<void>;
};

export type BroadcastHandlers = {
  /** A message another instance published. */
  message(message: string): void;
  /** Another instance answers live requests. */
  live(): void;
  /**
   * The line was down and is up again: messages may have been missed meanwhile (the listener
   * forgets what they could have been about).
   */
  resumed(): void;
};

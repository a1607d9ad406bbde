/**
 * The base of every error the library throws on purpose: configuration refused at startup, a failed
 * handler's stated reason, a refused redrive. `error instanceof MessagingError` tells the library's errors
 * from others; each subclass keeps its own `name` and structured fields.
 */
export abstract class MessagingError extends Error {
  /**
   * @param message - what happened, and how to fix it
   * @param options - `cause`, the underlying error
   */
  protected constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

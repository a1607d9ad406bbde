/**
 * The bytes one read of dead letters may hold (bodies, keys and headers together): a DLQ anyone can publish
 * into must not decide how much memory a page view or a plan takes (issue 45, finding 7). Counting is
 * synchronous, so reads of several partitions at once share one budget.
 */
export class ReadBudget {
  private used = 0;
  private full = false;

  /** `maxBytes`: a positive whole number of bytes. */
  constructor(readonly maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
      throw new RangeError(`A read budget is a positive whole number of bytes, not ${maxBytes}.`);
    }
  }

  /**
   * Counts a message of `bytes` and says whether the read keeps it. The first message is always kept (one
   * message is bounded by the broker's own size limit, and without it a large head could never be planned);
   * once one is refused every later one is too, so what a read keeps is a prefix of what it got.
   */
  admit(bytes: number): boolean {
    if (this.full) return false;
    if (this.used > 0 && this.used + bytes > this.maxBytes) {
      this.full = true;
      return false;
    }
    this.used += bytes;
    if (this.used >= this.maxBytes) this.full = true;
    return true;
  }

  /** True once the budget refused a message or is used up: the read stops. */
  get exhausted(): boolean {
    return this.full;
  }

  /** Bytes kept so far. */
  get usedBytes(): number {
    return this.used;
  }

  /** Bytes left (0 once exhausted). */
  get remainingBytes(): number {
    return this.full ? 0 : this.maxBytes - this.used;
  }
}

/** Why a read returned fewer messages than it was asked for, while more were waiting. */
export interface ReadCutOff {
  /** `byte-budget`: the messages read reached the read's byte budget. */
  readonly reason: 'byte-budget';
  /** The budget, bytes. */
  readonly budgetBytes: number;
  /** How many more the read would have returned (up to what it was asked for, as far as the depth tells). */
  readonly notRead: number;
}

/** The cut-off of a read of `limit` that returned `read` messages of `depth` waiting, if the budget cut it. */
export function cutOffOf(
  budget: ReadBudget,
  limit: number,
  depth: number,
  read: number,
): ReadCutOff | undefined {
  const notRead = Math.min(limit, depth) - read;
  if (!budget.exhausted || notRead <= 0) return undefined;
  return { reason: 'byte-budget', budgetBytes: budget.maxBytes, notRead };
}

/** Bytes of a header value however a client library decoded it (text, bytes, numbers, AMQP tables and arrays). */
export function headerValueBytes(value: unknown, depth = 0): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (Buffer.isBuffer(value)) return value.length;
  if (typeof value !== 'object' || depth > 8) return 8;
  const entries = Array.isArray(value) ? value.map((v) => ['', v] as const) : Object.entries(value);
  return entries.reduce(
    (sum, [name, v]) => sum + Buffer.byteLength(name) + headerValueBytes(v, depth + 1),
    0,
  );
}

/**
 * A read budget given in MiB as text (an environment variable `name`, e.g. `MESSAGING_ADMIN_READ_BUDGET_MIB`),
 * in bytes; undefined when empty (the default, `RedriveLimits.READ_BUDGET_BYTES`). Throws a `RangeError`
 * naming the variable unless it is a whole number from 1 to 1024.
 */
export function parseReadBudgetMib(text: string | undefined, name: string): number | undefined {
  const trimmed = text?.trim();
  if (!trimmed) return undefined;
  const mib = /^\d{1,4}$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!(mib >= 1 && mib <= 1024)) {
    throw new RangeError(`${name} is a whole number of MiB from 1 to 1024 (default 16), not '${trimmed}'.`);
  }
  return mib * 1024 * 1024;
}

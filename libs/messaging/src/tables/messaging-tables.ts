/** Quoted, qualified names of the library's tables: they live in the DataSource's schema (or database). */
export interface MessagingTables {
  readonly outbox: string;
  readonly inbox: string;
  /** Failed attempts of messages retried in place, beside the inbox. */
  readonly attempts: string;
  /** Scheduled outbox messages not yet due (`add(…, { deliverAt | delayMs })`). */
  readonly scheduled: string;
  /** Deliveries of a tenant whose database did not answer, kept until it does (tenants on; the service's database). */
  readonly parked: string;
  /** The PostgreSQL schema or MySQL database, or undefined for the connection's default. */
  readonly schema?: string;
}

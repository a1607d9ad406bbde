/**
 * Header names on the wire. Kafka carries them as record headers, RabbitMQ in the `headers` table (and, where
 * AMQP has a native property, there too). `msg.*` names are reserved for the library.
 */
export const MessageHeaders = {
  /** The message id: a UUIDv7, unique and time-ordered. */
  ID: 'msg.id',
  /** The event type, e.g. `PostCreated`. */
  TYPE: 'msg.type',
  /** When the business fact happened (ISO 8601). */
  OCCURRED_AT: 'msg.occurred-at',
  /** The envelope format's version (see `ENVELOPE_VERSION`). */
  ENVELOPE_VERSION: 'msg.envelope-version',
  /**
   * The version of the event's payload (`defineEvent({ version })`), a whole number from 1; absent means 1.
   * A consumer takes older versions through the definition's upcasters and holds newer ones.
   */
  EVENT_VERSION: 'msg.event-version',
  /** The ordering key, for transports without a native key (RabbitMQ). */
  KEY: 'msg.key',
  CONTENT_TYPE: 'content-type',
  /** W3C trace context. */
  TRACEPARENT: 'traceparent',
  TRACESTATE: 'tracestate',

  /** Dead-letter and retry headers (docs/guide/12-envelope.md). Only these are added to a dead-lettered message. */
  FAILURE_CATEGORY: 'msg.failure-category',
  FAILURE_CODE: 'msg.failure-code',
  ORIGIN_DESTINATION: 'msg.origin-destination',
  RETRY_ATTEMPT: 'msg.retry-attempt',
  FIRST_FAILURE_AT: 'msg.first-failure-at',
  LAST_FAILURE_AT: 'msg.last-failure-at',
  /** When a message in a retry destination is due again (ISO 8601). */
  RETRY_DUE_AT: 'msg.retry-due-at',
  /** Set by a redrive; distinct from the message id so that redrive loops can be seen. */
  REDRIVE_ID: 'msg.redrive-id',
  /** How many times the message was redriven. */
  REDRIVE_COUNT: 'msg.redrive-count',
  /** Earlier redrive ids, oldest first, comma-separated. */
  REDRIVE_HISTORY: 'msg.redrive-history',
  /** Set by a redrive: the consumer group it is meant for; other groups of the destination skip it. */
  REDRIVE_GROUP: 'msg.redrive-group',
  /**
   * Set by an edit (`RedriveService.planEdit`): the fingerprint (`sha256:…`) of the dead letter this copy is
   * an edited copy of; the original is archived with `msg.archive-id` equal to this copy's `msg.redrive-id`.
   */
  EDIT_OF: 'msg.edit-of',
  /** In a dead-letter copy: the real key, sealed under the deployment's key secret (see `KeySecret`). */
  SEALED_KEY: 'msg.sealed-key',
  /**
   * With tenants on: the tenant whose outbox the message was read from, stamped by the relay (never taken from
   * the row), and its signature (`msg.tenant-signature`, HMAC-SHA256 of tenant, message id and body under the
   * service's `tenants.signingSecret`). A consumer applies the message in that tenant's database only when the
   * signature holds (docs/guide/17-tenants.md).
   */
  TENANT: 'msg.tenant',
  TENANT_SIGNATURE: 'msg.tenant-signature',
} as const;

/** The content type of every body the library writes. */
export const JSON_CONTENT_TYPE = 'application/json';

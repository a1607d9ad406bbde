/**
 * Redrive: moving dead letters back, as an admin operation (plan → approve → execute). The same service the
 * `nest-messaging dlq` CLI runs. It needs admin broker credentials, which services never hold.
 *
 * @packageDocumentation
 */
export * from './dead-letter/redrive';

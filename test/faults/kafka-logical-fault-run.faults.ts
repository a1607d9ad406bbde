import { faultRunSuite } from './support/fault-run-suite';

// Issue 30: the same run with post-service's logical relay (relay.mode 'logical' on a cluster with
// wal_level = logical): the two post-service instances share one slot (one reads, one stands by), so killing
// one SIGKILLs the reader or the stand-by, and a PostgreSQL restart cuts the replication connection.
faultRunSuite('kafka', 'postgres', { relay: 'logical' });

// The lease of the suite's instances on PostgreSQL, in process (server.ts) or not (cluster.ts):
// its own module, because server.ts must not import what starts processes (test/run.ts keeps
// such files out of the quick run).

/**
 * They answer 5 s after they last confirmed they are caught up (INSTANCE_LEASE_MS; 1.7 s by
 * default): here they share a busy machine with each other, the databases and the tests, and
 * may be descheduled for seconds.
 */
export const TEST_INSTANCE_LEASE_MS = 5_000;

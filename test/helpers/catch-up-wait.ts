// How long the suite's instances on PostgreSQL let a request wait to catch up, in process
// (server.ts) or not (cluster.ts): its own module, because server.ts must not import what
// starts processes (test/run.ts keeps such files out of the quick run).

/**
 * 5 s (CATCH_UP_WAIT_MS; 2 s by default): here they share a busy machine with each other, the
 * databases and the tests, and one catch-up may wait seconds for a turn of the CPU.
 */
export const TEST_CATCH_UP_WAIT_MS = 5_000;

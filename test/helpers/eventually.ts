// Waiting for something that becomes true a little later (another instance catching up, a
// webhook arriving): polls `check` until it holds and says how long that took, or fails
// naming `what` once `timeoutMs` has passed.

export async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000, what = 'the condition', pollMs = 10): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not so within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

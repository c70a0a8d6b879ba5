// Waiting for something that becomes true a little later (another instance catching up, a
// webhook arriving): polls `check` until it holds and says how long that took, or fails
// naming `what` once `timeoutMs` has passed. The budget only bounds how long a broken test takes
// to fail: it is far above what a machine busy with other work needs, so it never decides a
// passing test (a property with a time bound measures the time it returns instead).

export async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000, what = 'the condition', pollMs = 10): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not so within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

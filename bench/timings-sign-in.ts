// The sign-in figure for `npm run bench:timings`: how long a failed sign-in takes for an unknown
// email, a wrong password and an account without a password (test/portal/sign-in-limits.test.ts
// asserts the same answer after the same work, one scrypt each; how alike the times are is
// measured here). 9 rounds, the three cases interleaved so a slow moment falls on each alike,
// on a server in this process; 9 stays under the account's limit of 10 failures.

import { spread, type Spread } from './timings-limits.ts';
import { BENCH_ADMIN_TOKEN, sendJson as send, startBenchServer } from './timings-server.ts';

const ROUNDS = 9;

export interface SignInFigures {
  unknown_email: Spread;
  wrong_password: Spread;
  no_password: Spread;
}

export async function measureSignIn(log: (line: string) => void): Promise<SignInFigures> {
  log(`Failed sign-ins: unknown email, wrong password, no password, ${ROUNDS} of each…`);
  const { app, base } = await startBenchServer();
  try {
    const admin = { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` };
    const page = { origin: base };
    const ada = (await send(base, 'POST', '/admin/v1/users', admin, { name: 'Ada', role: 'member', email: 'ada@example.com' })).body.data;
    const invitation = (await send(base, 'POST', `/admin/v1/users/${ada.id}/invitations`, admin, {})).body.data;
    const set = await send(base, 'POST', '/portal/v1/password', page, { invitation: invitation.token, password: 'the right password here' });
    if (set.status !== 201) throw new Error(`setting the password: ${set.status}`);
    await send(base, 'POST', '/admin/v1/users', admin, { name: 'Invited', role: 'member', email: 'no-password@example.com' });
    const cases: Record<keyof SignInFigures, (round: number) => { email: string; password: string }> = {
      unknown_email: (round) => ({ email: `nobody-${round}@example.com`, password: 'some password here' }),
      wrong_password: (round) => ({ email: 'ada@example.com', password: `wrong password ${round}` }),
      no_password: (round) => ({ email: 'no-password@example.com', password: `some password ${round}` }),
    };
    const times: Record<keyof SignInFigures, number[]> = { unknown_email: [], wrong_password: [], no_password: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const name of Object.keys(cases) as Array<keyof SignInFigures>) {
        const started = performance.now();
        const answer = await send(base, 'POST', '/portal/v1/session', page, cases[name](round));
        times[name].push(performance.now() - started);
        if (answer.status !== 401) throw new Error(`${name}: ${answer.status}`);
      }
    }
    const figures = { unknown_email: spread(times.unknown_email), wrong_password: spread(times.wrong_password), no_password: spread(times.no_password) };
    log(`  p50: unknown email ${figures.unknown_email.p50_ms.toFixed(1)} ms, wrong password ${figures.wrong_password.p50_ms.toFixed(1)} ms, no password ${figures.no_password.p50_ms.toFixed(1)} ms`);
    return figures;
  } finally {
    await app.close(2_000);
  }
}

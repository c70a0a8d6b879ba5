// The lines printed when the server starts, on every start: the demo keys and what each may
// do (the plain keys only on the start that made them, since the store keeps only hashes),
// where the dashboard is, where the operator token is, where records and limits are kept, and
// the address it listens on.

import type { DemoKey } from './demo-keys.ts';

export interface BannerFacts {
  url: string;
  /** The demo keys: plain on the first start, outlines afterwards; empty without demo data. */
  demoKeys: readonly DemoKey[];
  /** Where the operator token is: its file, the environment, or (memory only) the token itself. */
  operatorToken: { file: string; created: boolean } | { fromEnvironment: true } | { memoryOnly: string };
  /** Where records and rate-limit windows are kept, in words (src/backends/open-backends.ts). */
  backends?: { records: string; limits: string };
}

/** The banner's text, one line per entry, ending with the "listening on" line. */
export function startBanner(facts: BannerFacts): string {
  const lines: string[] = [];
  const first = facts.demoKeys[0];
  if (first?.plain) {
    lines.push('demo data created (MARKETPLACE_DEMO=0 starts empty). API keys, shown only now:');
  } else if (first) {
    lines.push('demo keys (shown only on the first start; the server keeps only their hashes):');
  }
  for (const demo of facts.demoKeys) {
    lines.push(`  ${demo.user} (${demo.role}): ${demo.key}`);
    lines.push(`      may: ${demo.permissions.join(' ')}`);
  }
  if (first?.plain) {
    lines.push(`  the examples in README.md and docs/ use ${first.user}'s key: export KEY=${first.key}`);
    lines.push(`try: curl -H "Authorization: Bearer ${first.key}" ${facts.url}/v1/listings`);
  } else if (first) {
    const permissions = first.permissions.join(',');
    lines.push(`  lost ${first.user}'s key? make another: npm run --silent cli -- keys create --user-id ${first.user_id} --permissions "${permissions}"`);
  }
  lines.push(`dashboard: ${facts.url}/dashboard (sign in with the operator token)`);
  lines.push(`developer portal: ${facts.url}/portal (your users sign in with an invitation link: marketplace users invite <user id>)`);
  const token = facts.operatorToken;
  if ('file' in token) {
    lines.push(token.created ? `operator token created in ${token.file} (mode 0600); send it as "Authorization: Bearer <token>" to /admin/v1` : `operator token: in ${token.file} (mode 0600)`);
  } else if ('fromEnvironment' in token) {
    lines.push('operator token: the value of MARKETPLACE_ADMIN_TOKEN');
  } else {
    lines.push(`operator token (memory only, gone at exit): ${token.memoryOnly}`);
  }
  if (facts.backends) lines.push(`records: ${facts.backends.records}; limits: ${facts.backends.limits}`);
  lines.push(`API description: ${facts.url}/openapi.json`);
  lines.push(`listening on ${facts.url}`);
  return `${lines.join('\n')}\n`;
}

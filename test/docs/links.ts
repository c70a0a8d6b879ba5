// Checks the relative links of a markdown file: each must name a file or folder inside the
// repository, and a `#fragment` must name a heading of the markdown file it points to
// (headings turned into anchors as GitHub does). Given the list of committed files, a target
// must also be committed, so a link to a git-ignored file fails too. Links with a scheme (https:, mailto:) are
// not followed.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

export interface LinkProblem {
  line: number;
  target: string;
  problem: string;
}

/** The link targets of a markdown file outside code (fenced blocks and `inline code`). */
export function linksIn(markdown: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  let inFence = false;
  for (const [index, raw] of markdown.split('\n').entries()) {
    if (/^\s*(```|~~~)/.test(raw)) {
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    const prose = raw.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: index + 1, target: match[1]! });
    for (const match of prose.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/g)) links.push({ line: index + 1, target: match[1]! });
  }
  return links;
}

/** GitHub's anchors for the headings of a markdown file (`## Rate limits` → `rate-limits`). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const raw of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(raw)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw);
    if (!heading) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Problems with the relative links of `file`, judged against the repository at `root`. */
export function checkLinks(file: string, root: string, tracked: ReadonlySet<string> | null = null): LinkProblem[] {
  const markdown = readFileSync(file, 'utf8');
  const problems: LinkProblem[] = [];
  for (const { line, target } of linksIn(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [pathPart, fragment] = splitFragment(decodeURI(target));
    const resolved = pathPart === '' ? file : resolve(dirname(file), pathPart);
    const inside = relative(root, resolved);
    if (inside.startsWith('..') || resolve(root, inside) !== resolved) {
      problems.push({ line, target, problem: 'points outside the repository' });
      continue;
    }
    if (!existsSync(resolved) || (tracked !== null && !isTracked(inside, tracked))) {
      problems.push({ line, target, problem: existsSync(resolved) ? 'not committed (git-ignored or untracked)' : 'no such file in the repository' });
      continue;
    }
    if (fragment !== null && statSync(resolved).isFile() && resolved.endsWith('.md')) {
      if (!headingAnchors(readFileSync(resolved, 'utf8')).has(fragment.toLowerCase())) {
        problems.push({ line, target, problem: `no heading with the anchor #${fragment}` });
      }
    }
  }
  return problems;
}

/** A committed file, or a folder holding one (`tracked` lists paths as `git ls-files` does). */
function isTracked(inside: string, tracked: ReadonlySet<string>): boolean {
  if (inside === '' || tracked.has(inside)) return true;
  for (const path of tracked) if (path.startsWith(`${inside}/`)) return true;
  return false;
}

function splitFragment(target: string): [string, string | null] {
  const hash = target.indexOf('#');
  return hash < 0 ? [target, null] : [target.slice(0, hash), target.slice(hash + 1)];
}

// Content negotiation for compression: which coding an Accept-Encoding header prefers among
// the ones we offer (br, gzip), with q-values honoured (RFC 9110 section 12.5.3). `q=0` refuses
// a coding; `*` stands for any coding the header does not name; identity is always acceptable
// as the fallback, so a header we cannot satisfy simply gets the plain bytes.

export type Encoding = 'br' | 'gzip';

/** Ours, in order of preference when the client weighs them equally (br is the smaller). */
const OFFERED: readonly Encoding[] = ['br', 'gzip'];

/** Distinct header values remembered; a client sends the same one on every request. */
const MAX_REMEMBERED = 256;
const remembered = new Map<string, Encoding | null>();

/**
 * The coding to answer with, or null for the plain bytes.
 * @example preferredEncoding('gzip, deflate, br;q=0.9') // 'gzip'
 */
export function preferredEncoding(acceptEncoding: string | undefined): Encoding | null {
  if (acceptEncoding === undefined || acceptEncoding === '') return null;
  let choice = remembered.get(acceptEncoding);
  if (choice === undefined) {
    choice = negotiate(acceptEncoding);
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(acceptEncoding, choice);
  }
  return choice;
}

function negotiate(acceptEncoding: string): Encoding | null {
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...parameters] = part.split(';');
    const coding = name!.trim().toLowerCase();
    if (coding === '') continue;
    let weight = 1;
    for (const parameter of parameters) {
      const match = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(parameter);
      if (match) weight = Math.min(1, Number(match[1]) || 0);
    }
    weights.set(coding, weight);
  }
  let best: Encoding | null = null;
  let bestWeight = 0;
  for (const coding of OFFERED) {
    const weight = weights.get(coding) ?? weights.get('*') ?? 0;
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  return best;
}

// The portal's QR code encoder (src/dashboard/public/qr.js), checked against the standard: the
// Reed-Solomon codewords of its worked example, the format and version codes of its tables, the
// finder, timing and alignment patterns and the dark module where a scanner looks for them, and
// every version and level read back to the same text by a reader written apart from it
// (test/helpers/qr-decode.ts). test/dashboard/qr-zbar.test.ts has zbar read them too.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeQr } from '../helpers/qr-decode.ts';

interface Qr { version: number; size: number; level: 'L' | 'M'; mask: number; modules: boolean[][] }
interface QrModule {
  encodeQr(text: string, options?: { level?: 'L' | 'M'; mask?: number }): Qr;
  reedSolomon(data: number[], degree: number): number[];
  formatBits(level: 'L' | 'M', mask: number): number;
  versionBits(version: number): number;
  totalCodewords(version: number): number;
  dataCodewords(version: number, level: 'L' | 'M'): number;
  penalty(modules: boolean[][]): number;
  MASKS: ReadonlyArray<(row: number, column: number) => boolean>;
  MAX_VERSION: number;
}

// A plain-JavaScript browser module; loading it by URL keeps the type checker out of it.
const qr = (await import(new URL('../../src/dashboard/public/qr.js', import.meta.url).href)) as QrModule;

/** An otpauth:// address as the portal's two-factor setup makes one (about 130 bytes). */
const OTPAUTH = 'otpauth://totp/Marketplace:portal-user-12345-1%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Marketplace&algorithm=SHA1&digits=6&period=30';

test('Reed-Solomon: the standard\'s worked example ("01234567" at 1-M) gets its ten error-correction codewords', () => {
  const data = [0x10, 0x20, 0x0c, 0x56, 0x61, 0x80, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11];
  assert.deepEqual(qr.reedSolomon(data, 10), [0xa5, 0x24, 0xd4, 0xc1, 0xed, 0x36, 0xc7, 0x87, 0x2c, 0x55]);
});

test('format codes are the standard\'s table for levels L and M, every mask', () => {
  const table = {
    L: ['111011111000100', '111001011110011', '111110110101010', '111100010011101', '110011000101111', '110001100011000', '110110001000001', '110100101110110'],
    M: ['101010000010010', '101000100100101', '101111001111100', '101101101001011', '100010111111001', '100000011001110', '100111110010111', '100101010100000'],
  } as const;
  for (const level of ['L', 'M'] as const) {
    table[level].forEach((expected, mask) => assert.equal(qr.formatBits(level, mask).toString(2).padStart(15, '0'), expected, `${level} mask ${mask}`));
  }
});

test('version codes are the standard\'s for versions 7 to 10', () => {
  assert.deepEqual([7, 8, 9, 10].map((version) => qr.versionBits(version).toString(16)), ['7c94', '85bc', '9a99', 'a4d3']);
});

test('capacities: codewords per version as the standard counts them, and byte capacity at M up to 213', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(qr.totalCodewords), [26, 44, 70, 100, 134, 172, 196, 242, 292, 346]);
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((version) => qr.dataCodewords(version, 'M')), [16, 28, 44, 64, 86, 108, 124, 154, 182, 216]);
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((version) => qr.dataCodewords(version, 'L')), [19, 34, 55, 80, 108, 136, 156, 194, 232, 274]);
  assert.equal(qr.encodeQr('x'.repeat(213)).version, 10);
  assert.throws(() => qr.encodeQr('x'.repeat(214)), /too long/);
});

test('an otpauth:// address: finder patterns in three corners, timing lines, the dark module, the alignment pattern', () => {
  const code = qr.encodeQr(OTPAUTH);
  assert.equal(code.level, 'M');
  const { size, modules } = code;
  assert.equal(size, code.version * 4 + 17);
  const finder = ['#######', '#.....#', '#.###.#', '#.###.#', '#.###.#', '#.....#', '#######'];
  const drawn = (top: number, left: number) => Array.from({ length: 7 }, (_, row) => modules[top + row]!.slice(left, left + 7).map((dark) => (dark ? '#' : '.')).join(''));
  assert.deepEqual(drawn(0, 0), finder, 'top left');
  assert.deepEqual(drawn(0, size - 7), finder, 'top right');
  assert.deepEqual(drawn(size - 7, 0), finder, 'bottom left');
  // Light separators around the finders.
  for (let index = 0; index < 8; index += 1) {
    assert.equal(modules[7]![index], false);
    assert.equal(modules[index]![7], false);
    assert.equal(modules[7]![size - 1 - index], false);
    assert.equal(modules[size - 8]![index], false);
  }
  for (let index = 8; index < size - 8; index += 1) {
    assert.equal(modules[6]![index], index % 2 === 0, `timing row at ${index}`);
    assert.equal(modules[index]![6], index % 2 === 0, `timing column at ${index}`);
  }
  assert.equal(modules[size - 8]![8], true, 'the dark module');
  // The bottom-right alignment pattern, centred 7 in from the far edges.
  const centre = size - 7;
  const ring = (distance: number) => [-2, -1, 0, 1, 2].flatMap((rowOffset) => [-2, -1, 0, 1, 2].filter((columnOffset) => Math.max(Math.abs(rowOffset), Math.abs(columnOffset)) === distance).map((columnOffset) => modules[centre + rowOffset]![centre + columnOffset]));
  assert.ok(ring(2).every(Boolean) && ring(1).every((dark) => !dark) && ring(0).every(Boolean), 'alignment pattern');
  assert.equal(decodeQr(modules).text, OTPAUTH);
});

test('the format information in both copies names the level and the mask the encoder chose', () => {
  const code = qr.encodeQr(OTPAUTH);
  const decoded = decodeQr(code.modules);
  assert.equal(decoded.level, 'M');
  assert.equal(decoded.mask, code.mask);
  // The second copy alone: the first one wiped, the reader still finds it.
  const wiped = code.modules.map((row) => row.slice());
  for (let index = 0; index < 9; index += 1) {
    wiped[8]![index] = !wiped[8]![index];
    wiped[index]![8] = !wiped[index]![8];
  }
  assert.equal(decodeQr(wiped).mask, code.mask);
});

test('the mask chosen has the lowest penalty of the eight, and every mask reads back', () => {
  for (const text of [OTPAUTH, 'a', 'hello world', OTPAUTH.slice(0, 60)]) {
    const chosen = qr.encodeQr(text);
    const scores = qr.MASKS.map((_condition, mask) => {
      const forced = qr.encodeQr(text, { mask });
      assert.equal(forced.mask, mask);
      const decoded = decodeQr(forced.modules);
      assert.deepEqual([decoded.text, decoded.mask], [text, mask]);
      return qr.penalty(forced.modules);
    });
    assert.equal(qr.penalty(chosen.modules), Math.min(...scores), `${text.slice(0, 20)}: scores ${scores.join(', ')}`);
    assert.equal(scores[chosen.mask], Math.min(...scores));
  }
});

test('every version from 1 to 10 at L and M reads back to the same text, UTF-8 included', () => {
  const seen = new Set<string>();
  for (const level of ['L', 'M'] as const) {
    for (let version = 1; version <= qr.MAX_VERSION; version += 1) {
      // The longest text that fits this version (byte count minus the mode and count bits).
      const countBits = version <= 9 ? 8 : 16;
      const length = Math.floor((qr.dataCodewords(version, level) * 8 - 4 - countBits) / 8);
      const text = Array.from({ length }, (_, index) => String.fromCharCode(33 + ((index * 7 + version) % 90))).join('');
      const code = qr.encodeQr(text, { level });
      assert.equal(code.version, version, `${length} bytes at ${level} fill version ${version}`);
      const decoded = decodeQr(code.modules);
      assert.equal(decoded.text, text);
      assert.equal(decoded.level, level);
      seen.add(`${level}${code.mask}`);
      // One byte more needs the next version.
      if (version < qr.MAX_VERSION) assert.equal(qr.encodeQr(`${text}x`, { level }).version, version + 1);
    }
  }
  assert.equal(decodeQr(qr.encodeQr('Grüße ✓ 二要素').modules).text, 'Grüße ✓ 二要素');
  assert.ok(seen.size > 2, 'different texts get different masks');
});

// The portal's QR codes read by zbar (zbarimg, an independent, widely used barcode reader), when
// it is installed: every version from 1 to 10 at levels L and M and an otpauth:// address as the
// two-factor setup draws it, written as a plain bitmap with the 4-module quiet zone. Skipped,
// with the reason, when zbarimg is not on PATH (apt-get install zbar-tools).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';

interface QrModule {
  encodeQr(text: string, options?: { level?: 'L' | 'M' }): { version: number; size: number; modules: boolean[][] };
  dataCodewords(version: number, level: 'L' | 'M'): number;
}
const qr = (await import(new URL('../../src/dashboard/public/qr.js', import.meta.url).href)) as QrModule;

function zbarimgPath(): string | null {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(directory, 'zbarimg'), constants.X_OK);
      return join(directory, 'zbarimg');
    } catch {
      // not here
    }
  }
  return null;
}

/** A plain PBM (P1) of `modules`, `scale` pixels a module, with a 4-module light border. */
function bitmap(modules: boolean[][], scale = 4): string {
  const quiet = 4;
  const pixels = (modules.length + quiet * 2) * scale;
  const lines = [`P1`, `${pixels} ${pixels}`];
  for (let y = 0; y < pixels; y += 1) {
    const row = Math.floor(y / scale) - quiet;
    const line: string[] = [];
    for (let x = 0; x < pixels; x += 1) {
      const column = Math.floor(x / scale) - quiet;
      line.push(modules[row]?.[column] ? '1' : '0');
    }
    lines.push(line.join(' '));
  }
  return `${lines.join('\n')}\n`;
}

const zbarimg = zbarimgPath();

test('zbar reads every version at L and M and a two-factor otpauth:// address', { skip: zbarimg ? false : 'zbarimg is not installed (apt-get install zbar-tools)' }, (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'qr-zbar-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  const texts: Array<[string, 'L' | 'M']> = [['otpauth://totp/Marketplace:ada%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Marketplace&algorithm=SHA1&digits=6&period=30', 'M']];
  for (const level of ['L', 'M'] as const) {
    for (let version = 1; version <= 10; version += 1) {
      const length = Math.floor((qr.dataCodewords(version, level) * 8 - 4 - (version <= 9 ? 8 : 16)) / 8);
      texts.push([Array.from({ length }, (_, index) => String.fromCharCode(48 + ((index * 11 + version) % 75))).join(''), level]);
    }
  }
  for (const [index, [text, level]] of texts.entries()) {
    const file = join(directory, `code-${index}.pbm`);
    writeFileSync(file, bitmap(qr.encodeQr(text, { level }).modules));
    const read = execFileSync(zbarimg!, ['--quiet', '--raw', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    assert.equal(read.replace(/\n$/, ''), text, `${level} #${index}`);
  }
});

// A small QR code reader for tests: a matrix of modules (true = dark) back to its text, written
// apart from the page's encoder (src/dashboard/public/qr.js) so that a test passing means the two
// agree on the standard. It reads the format information by looking it up in the standard's
// table of the 16 codes for levels L and M (the encoder computes them), checks every block's
// Reed-Solomon syndromes (the encoder divides by the generator), and reads byte mode only.
// @example
//   const { text } = decodeQr(matrixFromSvg);

/** The standard's format codes (ISO/IEC 18004 table C.1), already XORed with 101010000010010. */
const FORMAT_CODES: Record<string, { level: 'L' | 'M'; mask: number }> = {
  '111011111000100': { level: 'L', mask: 0 },
  '111001011110011': { level: 'L', mask: 1 },
  '111110110101010': { level: 'L', mask: 2 },
  '111100010011101': { level: 'L', mask: 3 },
  '110011000101111': { level: 'L', mask: 4 },
  '110001100011000': { level: 'L', mask: 5 },
  '110110001000001': { level: 'L', mask: 6 },
  '110100101110110': { level: 'L', mask: 7 },
  '101010000010010': { level: 'M', mask: 0 },
  '101000100100101': { level: 'M', mask: 1 },
  '101111001111100': { level: 'M', mask: 2 },
  '101101101001011': { level: 'M', mask: 3 },
  '100010111111001': { level: 'M', mask: 4 },
  '100000011001110': { level: 'M', mask: 5 },
  '100111110010111': { level: 'M', mask: 6 },
  '100101010100000': { level: 'M', mask: 7 },
};

/** Per version: [error-correction codewords per block, blocks] at L and M (table 9). */
const BLOCKS: Record<'L' | 'M', Array<[number, number]>> = {
  L: [[0, 0], [7, 1], [10, 1], [15, 1], [20, 1], [26, 1], [18, 2], [20, 2], [24, 2], [30, 2], [18, 4]],
  M: [[0, 0], [10, 1], [16, 1], [26, 1], [18, 2], [24, 2], [16, 4], [18, 4], [22, 4], [22, 5], [26, 5]],
};

/** The last alignment centre per version (the first is always 6; versions 7–10 have one between). */
const ALIGNMENT: number[][] = [[], [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50]];

export interface DecodedQr {
  text: string;
  version: number;
  level: 'L' | 'M';
  mask: number;
}

// GF(256), generator polynomial 0x11D, for the syndromes.
const EXP: number[] = [];
const LOG: number[] = new Array(256).fill(0);
for (let power = 0, value = 1; power < 255; power += 1) {
  EXP[power] = value;
  LOG[value] = power;
  value = value & 0x80 ? ((value << 1) ^ 0x11d) & 0xff : value << 1;
}
const gfMultiply = (a: number, b: number) => (a === 0 || b === 0 ? 0 : EXP[(LOG[a]! + LOG[b]!) % 255]!);

/** True when `codeword` (highest power first) has α^0 … α^(n-1) as roots: no error. */
function syndromesAreZero(codeword: number[], correctionLength: number): boolean {
  for (let root = 0; root < correctionLength; root += 1) {
    let value = 0;
    for (const coefficient of codeword) value = gfMultiply(value, EXP[root]!) ^ coefficient;
    if (value !== 0) return false;
  }
  return true;
}

function maskSays(mask: number, i: number, j: number): boolean {
  switch (mask) {
    case 0: return (i + j) % 2 === 0;
    case 1: return i % 2 === 0;
    case 2: return j % 3 === 0;
    case 3: return (i + j) % 3 === 0;
    case 4: return (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0;
    case 5: return ((i * j) % 2) + ((i * j) % 3) === 0;
    case 6: return (((i * j) % 2) + ((i * j) % 3)) % 2 === 0;
    default: return (((i * j) % 3) + ((i + j) % 2)) % 2 === 0;
  }
}

/** Whether (i, j) belongs to a function pattern (finders, separators, timing, alignment, format, version). */
function isFunctionModule(version: number, size: number, i: number, j: number): boolean {
  if (i <= 8 && j <= 8) return true; // top-left finder, separator, format
  if (i <= 8 && j >= size - 8) return true; // top-right finder, separator, format
  if (i >= size - 8 && j <= 8) return true; // bottom-left finder, separator, format, dark module
  if (i === 6 || j === 6) return true; // timing
  if (version >= 7 && ((i < 6 && j >= size - 11 && j < size - 8) || (j < 6 && i >= size - 11 && i < size - 8))) return true;
  const centres = ALIGNMENT[version]!;
  for (const row of centres) {
    for (const column of centres) {
      if ((row === 6 && column === 6) || (row === 6 && column === centres[centres.length - 1]) || (column === 6 && row === centres[centres.length - 1])) continue;
      if (Math.abs(i - row) <= 2 && Math.abs(j - column) <= 2) return true;
    }
  }
  return false;
}

function readFormat(matrix: boolean[][]): { level: 'L' | 'M'; mask: number } {
  const size = matrix.length;
  const bit = (i: number, j: number) => (matrix[i]![j] ? '1' : '0');
  // First copy, most significant bit first: along row 8 from column 0, then up column 8.
  const first = [0, 1, 2, 3, 4, 5, 7].map((j) => bit(8, j)).join('') + [8, 7, 5, 4, 3, 2, 1, 0].map((i) => bit(i, 8)).join('');
  // Second copy, most significant bit first: up column 8 from the bottom, then along row 8 to the right edge.
  const second = [1, 2, 3, 4, 5, 6, 7].map((back) => bit(size - back, 8)).join('') + [8, 7, 6, 5, 4, 3, 2, 1].map((back) => bit(8, size - back)).join('');
  for (const read of [first, second]) {
    const found = FORMAT_CODES[read];
    if (found) return found;
  }
  throw new Error(`no valid format information (read ${first} and ${second})`);
}

/** The text of the QR code whose modules are `matrix` (rows of booleans, true = dark, no quiet zone). */
export function decodeQr(matrix: boolean[][]): DecodedQr {
  const size = matrix.length;
  const version = (size - 17) / 4;
  if (!Number.isInteger(version) || version < 1 || version > 10) throw new Error(`a ${size}×${size} matrix is no QR code version 1–10`);
  if (matrix.some((row) => row.length !== size)) throw new Error('the matrix is not square');
  const { level, mask } = readFormat(matrix);

  // The bits in placement order: column pairs from the right, upwards first, skipping column 6.
  const bits: number[] = [];
  let upward = true;
  for (let right = size - 1; right > 0; right -= 2) {
    if (right === 6) right -= 1;
    for (let step = 0; step < size; step += 1) {
      const i = upward ? size - 1 - step : step;
      for (const j of [right, right - 1]) {
        if (isFunctionModule(version, size, i, j)) continue;
        bits.push(matrix[i]![j] !== maskSays(mask, i, j) ? 1 : 0);
      }
    }
    upward = !upward;
  }
  const codewords: number[] = [];
  for (let start = 0; start + 8 <= bits.length; start += 8) codewords.push(bits.slice(start, start + 8).reduce((byte, bit) => byte * 2 + bit, 0));

  // Undo the interleaving: data codewords round-robin over the blocks (short blocks first), then the correction.
  const [correctionLength, blockCount] = BLOCKS[level][version]!;
  const dataTotal = codewords.length - correctionLength * blockCount;
  const shortLength = Math.floor(dataTotal / blockCount);
  const longCount = dataTotal % blockCount;
  const blocks = Array.from({ length: blockCount }, (_, index) => ({ data: [] as number[], correction: [] as number[], length: shortLength + (index >= blockCount - longCount ? 1 : 0) }));
  let next = 0;
  for (let column = 0; column <= shortLength; column += 1) {
    for (const block of blocks) if (column < block.length) block.data.push(codewords[next++]!);
  }
  for (let column = 0; column < correctionLength; column += 1) {
    for (const block of blocks) block.correction.push(codewords[next++]!);
  }
  blocks.forEach((block, index) => {
    if (!syndromesAreZero([...block.data, ...block.correction], correctionLength)) throw new Error(`block ${index} fails its Reed-Solomon check`);
  });

  const data = blocks.flatMap((block) => block.data);
  const dataBits = data.flatMap((byte) => Array.from({ length: 8 }, (_, bit) => (byte >> (7 - bit)) & 1));
  let position = 0;
  const take = (length: number) => {
    let value = 0;
    for (let index = 0; index < length; index += 1) value = value * 2 + dataBits[position++]!;
    return value;
  };
  const mode = take(4);
  if (mode !== 0b0100) throw new Error(`mode ${mode.toString(2)} is not byte mode`);
  const count = take(version <= 9 ? 8 : 16);
  const bytes = Array.from({ length: count }, () => take(8));
  return { text: new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes)), version, level, mask };
}

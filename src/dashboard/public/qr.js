// A small QR code encoder (ISO/IEC 18004), so the portal can draw the two-factor setup's
// otpauth:// address as a code a phone scans, with no outside service and no library: byte mode,
// error correction level M (or L), versions 1 to 10 (up to 213 bytes at M, plenty for an
// otpauth:// address of ~120 bytes), the mask with the lowest penalty, format and version
// information. Pure functions and no DOM, so Node tests import it directly; the page draws the
// matrix as SVG (qr-svg.js).

/** Error correction per level: its two format bits, and per version [codewords per block, blocks]. */
const LEVELS = Object.freeze({
  L: { formatBits: 0b01, blocks: [null, [7, 1], [10, 1], [15, 1], [20, 1], [26, 1], [18, 2], [20, 2], [24, 2], [30, 2], [18, 4]] },
  M: { formatBits: 0b00, blocks: [null, [10, 1], [16, 1], [26, 1], [18, 2], [24, 2], [16, 4], [18, 4], [22, 4], [22, 5], [26, 5]] },
});

/** Rows (and columns) of the alignment patterns' centres, per version (the standard's Annex E). */
const ALIGNMENT_CENTRES = [null, [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50]];

export const MAX_VERSION = 10;

// Arithmetic in GF(256) with the QR code's polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11D).
const EXP = new Uint8Array(512);
const LOG = new Uint8Array(256);
{
  let value = 1;
  for (let power = 0; power < 255; power += 1) {
    EXP[power] = value;
    LOG[value] = power;
    value <<= 1;
    if (value & 0x100) value ^= 0x11d;
  }
  // A second copy, so a product's exponent sum needs no "mod 255".
  for (let power = 255; power < 512; power += 1) EXP[power] = EXP[power - 255];
}

function multiply(left, right) {
  return left === 0 || right === 0 ? 0 : EXP[LOG[left] + LOG[right]];
}

/** The Reed-Solomon generator of `degree`: (x - α^0)(x - α^1)…, coefficients highest power first. */
function generatorPolynomial(degree) {
  let polynomial = [1];
  for (let root = 0; root < degree; root += 1) {
    const next = new Array(polynomial.length + 1).fill(0);
    for (let index = 0; index < polynomial.length; index += 1) {
      next[index] ^= polynomial[index];
      next[index + 1] ^= multiply(polynomial[index], EXP[root]);
    }
    polynomial = next;
  }
  return polynomial;
}

/**
 * The `degree` error-correction codewords of `data` (the remainder of data·x^degree divided by
 * the generator).
 * @example reedSolomon([0x10, 0x20, 0x0c, 0x56, 0x61, 0x80, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11], 10)
 *   // [0xa5, 0x24, 0xd4, 0xc1, 0xed, 0x36, 0xc7, 0x87, 0x2c, 0x55] (the standard's "01234567" at 1-M)
 */
export function reedSolomon(data, degree) {
  const generator = generatorPolynomial(degree);
  const remainder = new Array(degree).fill(0);
  for (const byte of data) {
    const factor = byte ^ remainder.shift();
    remainder.push(0);
    for (let index = 0; index < degree; index += 1) remainder[index] ^= multiply(generator[index + 1], factor);
  }
  return remainder;
}

/** The 15 format bits for `level` and `mask`: BCH(15,5) with generator 0x537, XOR 0x5412. */
export function formatBits(level, mask) {
  const data = (LEVELS[level].formatBits << 3) | mask;
  let remainder = data;
  for (let step = 0; step < 10; step += 1) remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537);
  return ((data << 10) | remainder) ^ 0x5412;
}

/** The 18 version bits (versions 7 and up): BCH(18,6) with generator 0x1F25. */
export function versionBits(version) {
  let remainder = version;
  for (let step = 0; step < 12; step += 1) remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1f25);
  return (version << 12) | remainder;
}

/** The eight mask conditions: a data module at (row, column) is flipped where its mask says true. */
export const MASKS = Object.freeze([
  (row, column) => (row + column) % 2 === 0,
  (row) => row % 2 === 0,
  (_row, column) => column % 3 === 0,
  (row, column) => (row + column) % 3 === 0,
  (row, column) => (Math.floor(row / 2) + Math.floor(column / 3)) % 2 === 0,
  (row, column) => ((row * column) % 2) + ((row * column) % 3) === 0,
  (row, column) => (((row * column) % 2) + ((row * column) % 3)) % 2 === 0,
  (row, column) => (((row + column) % 2) + ((row * column) % 3)) % 2 === 0,
]);

/** A size × size grid of booleans. */
function grid(size) {
  return Array.from({ length: size }, () => new Array(size).fill(false));
}

/**
 * The function patterns of `version`: `dark` (their colours, with format and version bits still
 * light) and `reserved` (every module they take, which data never uses).
 */
function functionPatterns(version) {
  const size = version * 4 + 17;
  const dark = grid(size);
  const reserved = grid(size);
  const set = (row, column, isDark) => {
    dark[row][column] = isDark;
    reserved[row][column] = true;
  };
  // Timing patterns: row 6 and column 6 alternate, dark on even positions.
  for (let index = 0; index < size; index += 1) {
    set(6, index, index % 2 === 0);
    set(index, 6, index % 2 === 0);
  }
  // Finder patterns in three corners, each with its light separator (the 9×9 square around it,
  // clipped at the edge): dark at Chebyshev distance 0–1 and 3 from its centre, light at 2 and 4.
  for (const [centreRow, centreColumn] of [[3, 3], [3, size - 4], [size - 4, 3]]) {
    for (let rowOffset = -4; rowOffset <= 4; rowOffset += 1) {
      for (let columnOffset = -4; columnOffset <= 4; columnOffset += 1) {
        const row = centreRow + rowOffset;
        const column = centreColumn + columnOffset;
        if (row < 0 || row >= size || column < 0 || column >= size) continue;
        const distance = Math.max(Math.abs(rowOffset), Math.abs(columnOffset));
        set(row, column, distance !== 2 && distance !== 4);
      }
    }
  }
  // Alignment patterns at every pair of centres, except where a finder pattern already is.
  const centres = ALIGNMENT_CENTRES[version];
  const last = centres.length - 1;
  centres.forEach((centreRow, rowIndex) => {
    centres.forEach((centreColumn, columnIndex) => {
      const onFinder = (rowIndex === 0 && columnIndex === 0) || (rowIndex === 0 && columnIndex === last) || (rowIndex === last && columnIndex === 0);
      if (onFinder) return;
      for (let rowOffset = -2; rowOffset <= 2; rowOffset += 1) {
        for (let columnOffset = -2; columnOffset <= 2; columnOffset += 1) {
          set(centreRow + rowOffset, centreColumn + columnOffset, Math.max(Math.abs(rowOffset), Math.abs(columnOffset)) !== 1);
        }
      }
    });
  });
  // Format information beside the finders (written after the mask is chosen) and the dark module.
  for (let index = 0; index < 9; index += 1) {
    reserved[8][index] = true;
    reserved[index][8] = true;
  }
  for (let index = 0; index < 8; index += 1) {
    reserved[8][size - 1 - index] = true;
    reserved[size - 1 - index][8] = true;
  }
  set(size - 8, 8, true);
  // Version information (versions 7 and up): two 6×3 blocks beside the top-right and bottom-left finders.
  if (version >= 7) {
    for (let index = 0; index < 18; index += 1) {
      const near = Math.floor(index / 3);
      const far = size - 11 + (index % 3);
      reserved[near][far] = true;
      reserved[far][near] = true;
    }
  }
  return { size, dark, reserved };
}

/** Codewords (data and error correction) a version holds: its free modules, whole bytes only. */
export function totalCodewords(version) {
  const { reserved } = functionPatterns(version);
  const free = reserved.flat().filter((taken) => !taken).length;
  return Math.floor(free / 8);
}

/** Data codewords of `version` at `level`. */
export function dataCodewords(version, level) {
  const [perBlock, blocks] = LEVELS[level].blocks[version];
  return totalCodewords(version) - perBlock * blocks;
}

function characterCountBits(version) {
  return version <= 9 ? 8 : 16;
}

/** Bits written most significant first. */
class BitWriter {
  constructor() {
    this.bits = [];
  }
  write(value, length) {
    for (let bit = length - 1; bit >= 0; bit -= 1) this.bits.push((value >>> bit) & 1);
  }
}

/** The data codewords: mode, count, bytes, terminator, padding to the version's capacity. */
function dataCodewordsFor(bytes, version, level) {
  const capacityBits = dataCodewords(version, level) * 8;
  const writer = new BitWriter();
  writer.write(0b0100, 4);
  writer.write(bytes.length, characterCountBits(version));
  for (const byte of bytes) writer.write(byte, 8);
  writer.write(0, Math.min(4, capacityBits - writer.bits.length));
  writer.write(0, (8 - (writer.bits.length % 8)) % 8);
  const codewords = [];
  for (let index = 0; index < writer.bits.length; index += 8) {
    codewords.push(writer.bits.slice(index, index + 8).reduce((byte, bit) => (byte << 1) | bit, 0));
  }
  for (let pad = 0; codewords.length < capacityBits / 8; pad += 1) codewords.push(pad % 2 === 0 ? 0xec : 0x11);
  return codewords;
}

/**
 * Split into blocks, each with its error correction, then interleaved: the data codewords column
 * by column across the blocks (the shorter blocks first, one codeword shorter), then the error
 * correction the same way.
 */
function interleaved(data, version, level) {
  const [perBlock, blockCount] = LEVELS[level].blocks[version];
  const shortLength = Math.floor(data.length / blockCount);
  const longBlocks = data.length % blockCount;
  const blocks = [];
  let offset = 0;
  for (let index = 0; index < blockCount; index += 1) {
    const length = shortLength + (index >= blockCount - longBlocks ? 1 : 0);
    const blockData = data.slice(offset, offset + length);
    offset += length;
    blocks.push({ data: blockData, correction: reedSolomon(blockData, perBlock) });
  }
  const result = [];
  for (let column = 0; column <= shortLength; column += 1) {
    for (const block of blocks) if (column < block.data.length) result.push(block.data[column]);
  }
  for (let column = 0; column < perBlock; column += 1) {
    for (const block of blocks) result.push(block.correction[column]);
  }
  return result;
}

/**
 * The order data modules are filled in: two columns at a time from the right edge, going up
 * then down in turn, right column before left, skipping the vertical timing column and every
 * reserved module.
 */
export function dataModuleOrder(size, reserved) {
  const order = [];
  let upward = true;
  for (let right = size - 1; right >= 1; right -= 2) {
    if (right === 6) right = 5;
    for (let step = 0; step < size; step += 1) {
      const row = upward ? size - 1 - step : step;
      for (const column of [right, right - 1]) if (!reserved[row][column]) order.push([row, column]);
    }
    upward = !upward;
  }
  return order;
}

function placeFormat(modules, size, bits) {
  const bit = (index) => ((bits >>> index) & 1) === 1;
  // Beside the top-left finder: bits 0–7 down column 8 (skipping the timing row), 8–14 along row 8 leftwards.
  const columnRows = [0, 1, 2, 3, 4, 5, 7, 8];
  columnRows.forEach((row, index) => (modules[row][8] = bit(index)));
  const rowColumns = [7, 5, 4, 3, 2, 1, 0];
  rowColumns.forEach((column, index) => (modules[8][column] = bit(index + 8)));
  // The copy: bits 0–7 along row 8 from the right edge, 8–14 up to the bottom of column 8.
  for (let index = 0; index < 8; index += 1) modules[8][size - 1 - index] = bit(index);
  for (let index = 8; index < 15; index += 1) modules[size - 15 + index][8] = bit(index);
}

function placeVersion(modules, size, version) {
  if (version < 7) return;
  const bits = versionBits(version);
  for (let index = 0; index < 18; index += 1) {
    const isDark = ((bits >>> index) & 1) === 1;
    const near = Math.floor(index / 3);
    const far = size - 11 + (index % 3);
    modules[near][far] = isDark;
    modules[far][near] = isDark;
  }
}

/** The standard's penalty score of a finished matrix (lower is easier to scan). */
export function penalty(modules) {
  const size = modules.length;
  let score = 0;
  const lines = [];
  for (let index = 0; index < size; index += 1) {
    lines.push(modules[index]);
    lines.push(modules.map((row) => row[index]));
  }
  // Rule 1: five or more modules of one colour in a row or column: 3, plus 1 per module past five.
  // Rule 3: 1:1:3:1:1 dark-light-dark-light-dark with four light modules on either side: 40.
  const finderLike = [true, false, true, true, true, false, true];
  for (const line of lines) {
    let run = 1;
    for (let index = 1; index <= size; index += 1) {
      if (index < size && line[index] === line[index - 1]) {
        run += 1;
        continue;
      }
      if (run >= 5) score += 3 + (run - 5);
      run = 1;
    }
    for (let start = 0; start + 7 <= size; start += 1) {
      if (!finderLike.every((isDark, offset) => line[start + offset] === isDark)) continue;
      const lightBefore = [1, 2, 3, 4].every((back) => start - back < 0 || !line[start - back]);
      const lightAfter = [0, 1, 2, 3].every((ahead) => start + 7 + ahead >= size || !line[start + 7 + ahead]);
      if (lightBefore) score += 40;
      if (lightAfter) score += 40;
    }
  }
  // Rule 2: each 2×2 block of one colour: 3.
  for (let row = 0; row + 1 < size; row += 1) {
    for (let column = 0; column + 1 < size; column += 1) {
      const colour = modules[row][column];
      if (modules[row][column + 1] === colour && modules[row + 1][column] === colour && modules[row + 1][column + 1] === colour) score += 3;
    }
  }
  // Rule 4: 10 per whole 5 % the share of dark modules is away from half.
  const darkCount = modules.flat().filter(Boolean).length;
  score += Math.floor(Math.abs((darkCount * 100) / (size * size) - 50) / 5) * 10;
  return score;
}

/**
 * The QR code of `text` (UTF-8 bytes in byte mode) at error correction `level` ('M' or 'L'), in
 * the smallest version that holds it: `modules[row][column]` is true for a dark module. The mask
 * is the one with the lowest penalty unless `mask` (0–7) names one. Throws for text longer than
 * version 10 holds.
 * @example encodeQr('hello world').size // 21 (version 1); a 120-byte otpauth:// address is version 7 (45)
 */
export function encodeQr(text, { level = 'M', mask: forcedMask = null } = {}) {
  if (!LEVELS[level]) throw new Error(`Unknown error correction level ${level}: use L or M.`);
  const bytes = new TextEncoder().encode(text);
  let version = 1;
  while (version <= MAX_VERSION && 4 + characterCountBits(version) + bytes.length * 8 > dataCodewords(version, level) * 8) version += 1;
  if (version > MAX_VERSION) throw new Error(`The text is too long for a QR code up to version ${MAX_VERSION} at level ${level} (${bytes.length} bytes).`);

  const { size, dark, reserved } = functionPatterns(version);
  const codewords = interleaved(dataCodewordsFor(bytes, version, level), version, level);
  const order = dataModuleOrder(size, reserved);
  // Remainder modules past the last codeword stay light (before masking).
  const unmasked = dark.map((row) => row.slice());
  order.forEach(([row, column], index) => {
    const codeword = codewords[index >> 3];
    unmasked[row][column] = codeword !== undefined && ((codeword >>> (7 - (index & 7))) & 1) === 1;
  });

  let best = null;
  MASKS.forEach((condition, mask) => {
    if (forcedMask !== null && mask !== forcedMask) return;
    const modules = unmasked.map((row) => row.slice());
    for (const [row, column] of order) if (condition(row, column)) modules[row][column] = !modules[row][column];
    placeFormat(modules, size, formatBits(level, mask));
    placeVersion(modules, size, version);
    const score = penalty(modules);
    if (best === null || score < best.score) best = { modules, mask, score };
  });
  return { version, size, level, mask: best.mask, modules: best.modules };
}

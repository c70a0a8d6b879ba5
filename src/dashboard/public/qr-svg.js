// Draws a QR code (qr.js) as inline SVG: one light square with a 4-module quiet zone, and one
// dark rectangle per run of dark modules in a row, in module units, so the picture is sharp at
// any size and a test can read the matrix back from the rectangles. Nothing is fetched.

import { encodeQr } from './qr.js';

const SVG = 'http://www.w3.org/2000/svg';
/** Light modules around the code, as the standard asks, so a camera finds its edge. */
const QUIET_ZONE = 4;

function svgElement(tag, attributes) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}

/** An <svg role="img"> of the QR code of `text`, named `label` for screen readers. */
export function qrSvg(text, { label, id = null, level = 'M' } = {}) {
  const { size, modules, version } = encodeQr(text, { level });
  const extent = size + QUIET_ZONE * 2;
  const svg = svgElement('svg', { viewBox: `0 0 ${extent} ${extent}`, role: 'img', 'aria-label': label, class: 'qr-code', 'shape-rendering': 'crispEdges', 'data-version': version });
  if (id) svg.setAttribute('id', id);
  svg.appendChild(svgElement('rect', { x: 0, y: 0, width: extent, height: extent, fill: '#ffffff' }));
  modules.forEach((row, rowIndex) => {
    let column = 0;
    while (column < size) {
      if (!row[column]) {
        column += 1;
        continue;
      }
      const start = column;
      while (column < size && row[column]) column += 1;
      svg.appendChild(svgElement('rect', { class: 'qr-dark', x: start + QUIET_ZONE, y: rowIndex + QUIET_ZONE, width: column - start, height: 1, fill: '#000000' }));
    }
  });
  return svg;
}

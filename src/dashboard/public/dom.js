// Building page elements. Every string child becomes a text node and every attribute is set
// with setAttribute, so data from the API is always shown as text and never parsed as HTML.

/**
 * el('button', { class: 'primary', type: 'button', onclick: save }, 'Save')
 * Props: `on<event>` functions become listeners; `dataset` an object of data-* values;
 * booleans set or omit the attribute; null/undefined are skipped. (A <select>'s value must be
 * set after its options exist, i.e. after el() returns.) Children: nodes, strings,
 * numbers, arrays of them, or null/false (skipped).
 */
export function el(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), value);
    } else if (name === 'dataset') {
      for (const [key, data] of Object.entries(value)) element.dataset[key] = String(data);
    } else if (name === 'value') {
      // Both the attribute (what a form reset returns to) and the live value.
      element.setAttribute('value', String(value));
      element.value = String(value);
    } else if (name === 'checked') {
      element.defaultChecked = true;
      element.checked = true;
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(element, children);
  if (tag === 'table') labelCellsByColumn(element);
  return element;
}

/**
 * Gives each body cell its column's heading as data-label: at phone width the rows become
 * cards (style.css) and show each value under that heading.
 */
function labelCellsByColumn(table) {
  const headings = [...table.querySelectorAll('thead th')].map((heading) => heading.textContent.trim());
  if (headings.length === 0) return;
  for (const row of table.querySelectorAll('tbody tr')) {
    [...row.children].forEach((cell, index) => {
      if (headings[index]) cell.dataset.label = headings[index];
    });
  }
}

function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (typeof child === 'string' || typeof child === 'number') parent.appendChild(document.createTextNode(String(child)));
    else parent.appendChild(child);
  }
}

/** Replaces everything inside `parent` with `children`. */
export function replaceChildren(parent, ...children) {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
  return parent;
}

let idCounter = 0;
/** A fresh id for pairing a <label for> with its control. */
export function uniqueId(prefix) {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/** A labelled form field: the label, the control and an optional hint, linked for screen readers. */
export function field(labelText, control, hintText) {
  const id = control.id || uniqueId('field');
  control.id = id;
  const hint = hintText ? el('p', { class: 'hint', id: `${id}-hint` }, hintText) : null;
  if (hint) control.setAttribute('aria-describedby', hint.id);
  return el('div', { class: 'field' }, el('label', { for: id }, labelText), control, hint);
}

/**
 * Moves keyboard focus to the heading of the card `selector` names (made focusable by script
 * only), so that when the box a person was using goes away they land on what it was about
 * instead of at the top of the page; when there is no such card, on `fallback` if given.
 */
export function focusCardHeading(selector, fallback = null) {
  const heading = document.querySelector(`${selector} h3`);
  const target = heading ?? fallback;
  if (!target) return;
  if (target === heading) heading.setAttribute('tabindex', '-1');
  target.focus();
}

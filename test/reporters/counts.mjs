// A node:test reporter that writes only the final counts, as JSON, for test/run.ts to print
// the last line of `npm test` ("812 passed, 0 failed, 2 skipped").

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* countsReporter(source) {
  /** @type {Record<string, number>} */
  const counts = {};
  for await (const { type, data } of source) {
    if (type !== 'test:diagnostic' || data.nesting !== 0 || !data.message) continue;
    const [name, value] = data.message.split(' ');
    if (name !== undefined && value !== undefined && /^[\d.]+$/.test(value)) counts[name] = Number(value);
  }
  yield JSON.stringify(counts);
}

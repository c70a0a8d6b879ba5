// A node:test reporter that writes how long each test file's tests took, as JSON
// ({ "test/x.test.ts": ms }), for test/run.ts to deal the quick run's files evenly next time.

import { relative } from 'node:path';

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* durationsReporter(source) {
  /** @type {Record<string, number>} */
  const byFile = {};
  for await (const { type, data } of source) {
    if ((type !== 'test:pass' && type !== 'test:fail') || data.nesting !== 0 || typeof data.file !== 'string') continue;
    const file = relative(process.cwd(), data.file);
    byFile[file] = (byFile[file] ?? 0) + (data.details?.duration_ms ?? 0);
  }
  yield JSON.stringify(byFile);
}

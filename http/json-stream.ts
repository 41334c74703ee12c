/**
 * `{"<key>": [...]}` for a long list, serialised a slice at a time with a
 * turn of the event loop between slices: `JSON.stringify` of 100,000 file
 * entries at once held every other request for its whole duration.
 */
import { Readable } from 'node:stream';

/** Entries serialised per turn of the event loop. */
const SLICE = 1000;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function* sliced(key: string, items: readonly unknown[]): AsyncGenerator<string> {
  yield `{${JSON.stringify(key)}:[`;
  for (let i = 0; i < items.length; i += SLICE) {
    if (i > 0) await nextTurn();
    const text = items.slice(i, i + SLICE).map((x) => JSON.stringify(x)).join(',');
    yield i === 0 ? text : `,${text}`;
  }
  yield ']}';
}

/** The object `{[key]: items}`, or the same JSON as a stream when the list is long. */
export function listBody(key: string, items: readonly unknown[]): Readable | Record<string, readonly unknown[]> {
  if (items.length <= SLICE) return { [key]: items };
  return Readable.from(sliced(key, items), { objectMode: false });
}

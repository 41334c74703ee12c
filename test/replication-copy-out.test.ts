// The COPY TO framing parser (pg-copy-out.ts): a real binary COPY byte
// stream, captured from PostgreSQL over a raw socket, fed to it cut at every
// split point (one cut and every pair of cuts) gives exactly the CopyData
// payloads and hands pg exactly the bytes after CopyDone; on a real
// connection, a COPY that fails mid-stream gives PostgreSQL's error and
// leaves the connection usable, a slow consumer (back-pressure) gets the
// same bytes as pg-copy-streams, and a stream destroyed mid-way still gives
// the connection back.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { PgCopyOut } from '../engine/replication/pg-copy-out.js';
import { createTempDatabase, type TempDatabase } from './helpers/pg.js';

const COPY_SQL = `COPY (SELECT g, 'v' || g AS t, g * 0.5 AS f FROM generate_series(1, 3) g) TO STDOUT (FORMAT binary)`;

async function tempDb(t: TestContext, prefix: string): Promise<TempDatabase> {
  const db = await createTempDatabase(prefix);
  t.after(() => db.drop());
  return db;
}

/** Every byte PostgreSQL sends for `sql` after the startup, through its ReadyForQuery, read off a raw socket. */
async function rawReply(db: TempDatabase, sql: string): Promise<Buffer> {
  const socket = connect(5432, '127.0.0.1');
  const chunks: Buffer[] = [];
  let readyCount = 0;
  let startupEnd = -1;
  const done = new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // Walk the complete messages so far, counting ReadyForQuery: the first ends the startup, the second the query.
      const all = Buffer.concat(chunks);
      let p = 0;
      readyCount = 0;
      while (p + 5 <= all.length && p + 1 + all.readUInt32BE(p + 1) <= all.length) {
        const end = p + 1 + all.readUInt32BE(p + 1);
        if (all[p] === 0x45 && startupEnd < 0) reject(new Error(`startup failed: ${all.subarray(p, end).toString('latin1')}`));
        if (all[p] === 0x5a && ++readyCount === 1 && startupEnd < 0) {
          startupEnd = end;
          const q = Buffer.from(`${sql}\0`);
          const head = Buffer.alloc(5);
          head.write('Q', 0, 'latin1');
          head.writeUInt32BE(q.length + 4, 1);
          socket.write(Buffer.concat([head, q]));
        }
        p = end;
      }
      if (readyCount === 2) resolve();
    });
  });
  const params = Buffer.from(`user\0postgres\0database\0${db.name}\0\0`);
  const startup = Buffer.alloc(8);
  startup.writeUInt32BE(8 + params.length, 0);
  startup.writeUInt32BE(196608, 4); // protocol 3.0
  socket.write(Buffer.concat([startup, params]));
  await done;
  socket.end();
  return Buffer.concat(chunks).subarray(startupEnd);
}

/** The messages of a reply: type and whole bytes. */
function messages(reply: Buffer): { code: string; bytes: Buffer }[] {
  const out = [];
  for (let p = 0; p < reply.length;) {
    const end = p + 1 + reply.readUInt32BE(p + 1);
    out.push({ code: String.fromCharCode(reply[p]!), bytes: reply.subarray(p, end) });
    p = end;
  }
  return out;
}

/**
 * A PgCopyOut submitted on a stand-in for pg's connection: `socket` emits the
 * bytes under test, `toPg` keeps what is handed back to pg's parser, and
 * `payload()` reads what the stream holds.
 */
function onSocket(): { socket: EventEmitter; toPg: Buffer[]; payload: () => Buffer } {
  const socket = Object.assign(new EventEmitter(), { pause() {}, resume() {} });
  const toPg: Buffer[] = [];
  socket.on('data', (b: Buffer) => toPg.push(Buffer.from(b)));
  const copy = new PgCopyOut(COPY_SQL);
  copy.submit({ stream: socket, query() {} } as unknown as pg.Connection);
  const payload = () => (copy.read() as Buffer | null) ?? Buffer.alloc(0);
  return { socket, toPg, payload };
}

test('a real COPY reply cut at every split point (and every pair): the CopyData payloads, then pg gets the rest', async (t) => {
  const db = await tempDb(t, 'copy_out_split');
  const reply = await rawReply(db, COPY_SQL);
  const msgs = messages(reply);
  assert.deepEqual([...new Set(msgs.map((m) => m.code))], ['H', 'd', 'c', 'C', 'Z']);
  const expected = Buffer.concat(msgs.filter((m) => m.code === 'd').map((m) => m.bytes.subarray(5)));
  const doneAt = msgs.findIndex((m) => m.code === 'c');
  const after = Buffer.concat(msgs.slice(doneAt + 1).map((m) => m.bytes));
  const feed = (cuts: number[]) => {
    const { socket, toPg, payload } = onSocket();
    const bounds = [0, ...cuts, reply.length];
    // A copy per run: the parser moves payloads in place in the chunks it owns.
    for (let i = 0; i + 1 < bounds.length; i++) socket.emit('data', Buffer.from(reply.subarray(bounds[i], bounds[i + 1])));
    const what = `cut at ${cuts.join(', ')}`;
    assert.ok(payload().equals(expected), `${what}: payload`);
    assert.ok(Buffer.concat(toPg).equals(after), `${what}: bytes handed back to pg`);
  };
  for (let i = 1; i < reply.length; i++) {
    feed([i]);
    for (let j = i + 1; j < reply.length; j++) feed([i, j]);
  }
});

test('a NoticeResponse inside the COPY data is skipped; an ErrorResponse goes to pg from its first byte', () => {
  const message = (code: string, body: Buffer) => {
    const head = Buffer.alloc(5);
    head.write(code, 0, 'latin1');
    head.writeUInt32BE(body.length + 4, 1);
    return Buffer.concat([head, body]);
  };
  const error = message('E', Buffer.from('SERROR\0C22012\0Mdivision by zero\0\0'));
  const stream = Buffer.concat([message('H', Buffer.from([1, 0, 0])), message('d', Buffer.from('ab')), message('N', Buffer.from('SNOTICE\0Mhi\0\0')), message('d', Buffer.from('cd')), error, message('Z', Buffer.from('I'))]);
  for (let i = 1; i < stream.length; i++) {
    const { socket, toPg, payload } = onSocket();
    socket.emit('data', Buffer.from(stream.subarray(0, i)));
    socket.emit('data', Buffer.from(stream.subarray(i)));
    assert.equal(payload().toString(), 'abcd', `cut at ${i}`);
    assert.ok(Buffer.concat(toPg).equals(stream.subarray(stream.length - error.length - 6)), `cut at ${i}: pg gets the error and what follows`);
  }
});

/** A client on a database of its own; both go when the test ends (the client first). */
async function client(t: TestContext, prefix: string): Promise<pg.Client> {
  const db = await createTempDatabase(prefix);
  const c = new pg.Client({ connectionString: db.url });
  t.after(async () => {
    await c.end().catch(() => {});
    await db.drop();
  });
  await c.connect();
  return c;
}

const drain = (stream: NodeJS.ReadableStream, onChunk: (b: Buffer) => Promise<void> | void = () => {}) =>
  pipeline(stream, new Writable({ highWaterMark: 1, write: (b: Buffer, _e, done) => void Promise.resolve(onChunk(b)).then(() => done(), done) }));

test('a COPY that fails on row 20,000 fails with PostgreSQL\'s message after its first rows; the connection stays usable', async (t) => {
  const c = await client(t, 'copy_out_error');
  let bytes = 0;
  const copy = c.query(new PgCopyOut('COPY (SELECT g, 1 / (20000 - g) FROM generate_series(1, 30000) g) TO STDOUT (FORMAT binary)'));
  await assert.rejects(drain(copy, (b) => void (bytes += b.length)), /division by zero/);
  assert.ok(bytes > 0, 'rows before the failing one arrived');
  assert.equal((await c.query('SELECT 41 + 1 AS v')).rows[0].v, 42);
});

test('a slow consumer (back-pressure) gets the same bytes as pg-copy-streams; a destroyed stream gives the connection back', async (t) => {
  const c = await client(t, 'copy_out_slow');
  const sql = `COPY (SELECT g, repeat('x', g % 100) FROM generate_series(1, 200000) g) TO STDOUT (FORMAT binary)`;
  const theirs: Buffer[] = [];
  await drain(c.query(copyTo(sql)), (b) => void theirs.push(Buffer.from(b)));
  const ours: Buffer[] = [];
  const copy = c.query(new PgCopyOut(sql));
  await drain(copy, async (b) => {
    ours.push(Buffer.from(b));
    if (ours.length % 8 === 0) await new Promise((r) => setTimeout(r, 1));
  });
  assert.ok(Buffer.concat(ours).equals(Buffer.concat(theirs)));
  assert.equal(copy.rowCount, 200000);

  const cut = c.query(new PgCopyOut(sql));
  await new Promise<void>((resolve) => cut.once('data', () => resolve()));
  cut.destroy();
  assert.equal((await c.query('SELECT 41 + 1 AS v')).rows[0].v, 42);
});

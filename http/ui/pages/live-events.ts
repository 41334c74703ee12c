/**
 * `GET /ui/executions/<id>/events`: an execution's progress as server-sent
 * events, for its page's script.
 *
 * On connect: subscribe to the line router's output feed first, then read
 * the stored records with their output (`record` events carry it whole), then
 * forward live `chunk`s — dropping what the stored output already held (by
 * offset, see output-feed.ts). Statuses and times are re-read from the store
 * every `pollMs` and sent when they change (`exec`, `record`); while another
 * daemon of a cluster runs the execution, this daemon's feed carries none of
 * its lines, so each poll also reads the stored output and sends what grew as
 * `chunk`s (same offsets, same dedup). When the
 * execution is terminal the records are sent once more with their final
 * output, then `end`, and the stream closes.
 */
import { PassThrough } from 'node:stream';
import type { OutputChunk } from '../../../actors/daemon/output-feed.js';
import { isTerminalStatus, type ExecutionRecord } from '../../../engine/state/store.js';
import { executionView } from '../../routes/executions.js';
import { notFound } from '../../http-error.js';
import type { ConsoleDeps } from '../ui-deps.js';
import type { UiRequest, UiResult } from '../ui-route.js';
import { executionRecords, type RecordView } from './execution-records.js';

const HEARTBEAT_MS = 15_000;

/** The open streams, so the daemon can end them when it stops (a stream of an execution that never ends would keep the server open). */
export type LiveStreams = Set<() => void>;

export async function liveEvents(deps: ConsoleDeps, req: UiRequest, execId: string, open: LiveStreams): Promise<UiResult> {
  const { store } = deps;
  const first = await store.getExecution(req.projectId, execId);
  if (!first) throw notFound(`execution ${execId} not found`);
  const { ctx } = req;
  const stream = new PassThrough();
  const send = (event: string, data: unknown) => void stream.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const known = new Map<string, number>(); // id → stored output length already accounted for
  const pending: OutputChunk[] = [];
  let ready = false;
  const forward = (c: OutputChunk) => {
    const have = known.get(c.id) ?? 0;
    if (c.offset + c.text.length <= have) return;
    const text = c.text.slice(Math.max(0, have - c.offset));
    known.set(c.id, c.offset + c.text.length);
    send('chunk', { id: c.id, text });
  };
  /** What the stored output of a record holds beyond what was sent, as a chunk (the output may be only its tail). */
  const forwardStored = (r: RecordView) => {
    const total = r.outputLength ?? 0;
    const have = known.get(r.id) ?? 0;
    if (r.output === undefined || total <= have) return;
    const offset = Math.max(have, total - r.output.length);
    forward({ execId, id: r.id, offset, text: r.output.slice(r.output.length - (total - offset)) });
  };
  const unsubscribe = deps.output.subscribe(execId, (c) => (ready ? forward(c) : pending.push(c)));

  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const heartbeat = setInterval(() => stream.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const close = () => {
    if (closed) return;
    closed = true;
    open.delete(close);
    unsubscribe();
    clearTimeout(timer);
    clearInterval(heartbeat);
    stream.end();
  };
  ctx.req.on('close', close);
  open.add(close);

  const statusOf = (r: RecordView) => JSON.stringify([r.status, r.start_time, r.end_time, r.rows, r.error]);
  const seen = new Map<string, string>();
  const sendRecords = (records: readonly RecordView[], withOutput: boolean) => {
    for (const r of records) {
      if (withOutput) {
        known.set(r.id, r.outputLength ?? 0);
        send('record', r);
      } else if (seen.get(r.id) !== statusOf(r)) {
        const { output: _o, outputLength: _l, truncated: _t, ...rest } = r;
        send('record', rest);
      }
      seen.set(r.id, statusOf(r));
    }
  };
  const execState = (e: ExecutionRecord) => JSON.stringify(executionView(e));
  let lastExec = '';
  const sendExec = (e: ExecutionRecord) => {
    const s = execState(e);
    if (s !== lastExec) send('exec', executionView(e));
    lastExec = s;
  };

  ctx.req.socket.setTimeout(0);
  ctx.status = 200;
  ctx.type = 'text/event-stream; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.body = stream;

  sendExec(first);
  sendRecords(await executionRecords(store, first, true), true);
  ready = true;
  for (const c of pending.splice(0)) forward(c);
  if (isTerminalStatus(first.status)) {
    send('end', { status: first.status });
    close();
    return { kind: 'done' };
  }

  const poll = async () => {
    if (closed) return;
    try {
      const exec = await store.getExecution(req.projectId, execId);
      if (!exec) return close();
      const terminal = isTerminalStatus(exec.status);
      sendExec(exec);
      const remote = !terminal && deps.runsHere !== undefined && !deps.runsHere(execId);
      // At the end: the final records with their whole output (whatever the feed carried is in it).
      const records = await executionRecords(store, exec, terminal || remote);
      if (remote) for (const r of records) forwardStored(r);
      sendRecords(records, terminal);
      if (terminal) {
        send('end', { status: exec.status });
        return close();
      }
    } catch (err) {
      deps.logger.log('warn', `live events of execution ${execId}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!closed) timer = setTimeout(() => void poll(), deps.livePollMs ?? 400);
  };
  timer = setTimeout(() => void poll(), deps.livePollMs ?? 400);
  return { kind: 'done' };
}

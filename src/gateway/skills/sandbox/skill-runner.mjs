// The skill runner: a child process of the daemon (started with an empty environment, in an empty
// working directory) that runs skills' handler code, each execution in a fresh V8 isolate of its own
// (isolated-vm) with a memory limit and a time limit. Inside the isolate there is no `require`, no
// `process`, no file system, no network, no timers: only the language and the `input` it is given,
// passed in and out as JSON text. The daemon sends {id, code, input, timeoutMs, memoryMb} over IPC
// and gets {id, ok, output | error, kind}; it kills this process when an answer is late.
// Plain JavaScript so it runs as it is from the source tree, the tsc output and the bundle.
import ivm from 'isolated-vm';

/** Wrap the handler body (the body of an async function of `input`) and return JSON text. */
function program(code) {
  return `(async function () {
  const input = JSON.parse(__ctlInput);
  const __ctlResult = await (async function (input) {
${code}
  })(input);
  return __ctlResult === undefined ? 'null' : JSON.stringify(__ctlResult);
})()`;
}

async function run(job) {
  const isolate = new ivm.Isolate({ memoryLimit: job.memoryMb });
  try {
    const context = await isolate.createContext();
    await context.global.set('__ctlInput', job.input);
    const started = process.hrtime.bigint();
    const script = await isolate.compileScript(program(job.code), { filename: 'skill.js' });
    const output = await script.run(context, { timeout: job.timeoutMs, promise: true, copy: true });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (typeof output !== 'string') return { ok: false, kind: 'output', error: 'the handler returned a value that is not JSON' };
    return { ok: true, output, ms };
  } catch (e) {
    const message = String((e && e.message) || e);
    if (isolate.isDisposed || /memory limit/i.test(message)) return { ok: false, kind: 'memory', error: `memory limit of ${job.memoryMb} MiB exceeded` };
    if (/timed out/i.test(message)) return { ok: false, kind: 'timeout', error: `time limit of ${job.timeoutMs} ms exceeded` };
    return { ok: false, kind: 'error', error: message.slice(0, 2000) };
  } finally {
    if (!isolate.isDisposed) isolate.dispose();
  }
}

process.on('message', (job) => {
  run(job).then(
    (r) => process.send({ id: job.id, ...r }),
    (e) => process.send({ id: job.id, ok: false, kind: 'error', error: String(e && e.message) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true });

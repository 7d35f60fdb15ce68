// The skill runner: a child process of the daemon (started with an empty environment, in an empty
// working directory) that runs skills' handler code, each execution in a fresh V8 isolate of its own
// (isolated-vm) with a memory limit and a time limit. Inside the isolate there is no `require`, no
// `process`, no file system, no network, no timers: only the language and the `input` it is given,
// passed in and out as JSON text. The daemon sends {id, code, input, timeoutMs, memoryMb} over IPC
// and gets {id, ok, output | error, kind}; it kills this process when an answer is late.
// WebAssembly is off (the daemon starts this process with --no-expose-wasm): a WebAssembly.Memory
// lives outside the isolate's heap, so `memoryLimit` does not bound it (one grew to 3.9 GiB under a
// 64 MiB limit). An output longer than maxOutputBytes is measured in the isolate and never copied out.
// Plain JavaScript so it runs as it is from the source tree, the tsc output and the bundle.
import ivm from 'isolated-vm';

if (typeof WebAssembly !== 'undefined') {
  // Started without --no-expose-wasm: the isolates' memory limit would not hold. Refuse to run.
  console.error('skill runner: WebAssembly must be off (node --no-expose-wasm)');
  process.exit(70);
}

/**
 * Wrap the handler body (the body of an async function of `input`): the result's JSON text, or its
 * length (a number) when that is over the limit, so a huge output stays inside the isolate.
 */
function program(code, maxChars) {
  return `(async function () {
  const input = JSON.parse(__ctlInput);
  const __ctlResult = await (async function (input) {
${code}
  })(input);
  const __ctlText = __ctlResult === undefined ? 'null' : JSON.stringify(__ctlResult);
  return typeof __ctlText === 'string' && __ctlText.length > ${maxChars} ? __ctlText.length : __ctlText;
})()`;
}

const tooLarge = (job, size) => ({ ok: false, kind: 'too_large', error: `the output is larger than ${job.maxOutputBytes} bytes (${size}); it was dropped` });

async function run(job) {
  const isolate = new ivm.Isolate({ memoryLimit: job.memoryMb });
  try {
    const context = await isolate.createContext();
    await context.global.set('__ctlInput', job.input);
    const started = process.hrtime.bigint();
    const script = await isolate.compileScript(program(job.code, job.maxOutputBytes), { filename: 'skill.js' });
    const output = await script.run(context, { timeout: job.timeoutMs, promise: true, copy: true });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (typeof output === 'number') return tooLarge(job, `${output} characters`);
    if (typeof output !== 'string') return { ok: false, kind: 'output', error: 'the handler returned a value that is not JSON' };
    const bytes = Buffer.byteLength(output);
    if (bytes > job.maxOutputBytes) return tooLarge(job, `${bytes} bytes`);
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

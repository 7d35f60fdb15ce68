/** Poll `ok` every `everyMs` until it holds; throws naming `what` after `ms`. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 3000, everyMs = 25): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

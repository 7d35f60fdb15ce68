/**
 * Turns of the event loop for work that comes in steps of milliseconds each (the stages of a chat
 * of thousands of messages). Giving the loop back with setImmediate alone does not spread such
 * steps: every request's step queued in one turn runs in the next, so four heavy requests at once
 * would hold that turn four steps long. ownTurn lets one waiter go per turn, in order of arrival.
 */
const waiting: (() => void)[] = [];
let scheduled = false;

function grant(): void {
  const next = waiting.shift();
  if (waiting.length > 0) setImmediate(grant);
  else scheduled = false;
  // The waiter's step runs right after this callback (its promise's continuation), before the next turn's.
  next?.();
}

/** Resolves in a later turn of the loop in which no other ownTurn waiter goes. */
export function ownTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(grant);
    }
  });
}

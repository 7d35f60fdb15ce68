/**
 * The methods of a synchronous store (the daemon's SQLite file) as either store may answer them:
 * now, or later (the PostgreSQL store of several daemons). Callers await every answer.
 */
type Awaitable<F> = F extends (...args: infer A) => infer R ? (...args: A) => R | Promise<R> : never;

export type AwaitableMethods<T, Skip extends keyof T = never> = { [K in Exclude<keyof T, Skip>]: Awaitable<T[K]> };

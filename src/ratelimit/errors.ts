/** The original's RateLimitException: configuration problems of the limiter (start-up or reload). */
export class RateLimitException extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RateLimitException';
  }

  /** Exactly the original's text. */
  static adapterNotSupported(name: string): RateLimitException {
    return new RateLimitException(`Rate limit adapter \`${name}\` is not supported.`);
  }
}

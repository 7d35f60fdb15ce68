/**
 * The token-count thread's program (bundled on its own as dist/bundle/token-worker.mjs): it loads
 * the tokenizer's tables (a few MB, hundreds of milliseconds to seconds) and counts the texts the
 * daemon's thread hands over, so neither ever holds the event loop every API shares.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { serveLane } from '../../http/worker-lane-thread.js';
import { countInPieces } from './token-pieces.js';

serveLane(({ text, length }: { text: string; length: number }) => countInPieces(countTokens, text, length));

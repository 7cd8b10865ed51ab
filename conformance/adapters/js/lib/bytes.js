// UTF-8 byte lengths and SHA-256 digests (SPEC §1.1: byte counts are UTF-8 bytes).
import { createHash } from 'node:crypto';

/**
 * UTF-8 byte length of a string. A lone surrogate (only possible in pass-through data, never in
 * a canonical item) counts as the 3 bytes of U+FFFD, which is how Node encodes it.
 */
export function utf8Length(str) {
  return Buffer.byteLength(str, 'utf8');
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of a string. */
export function sha256Hex(str) {
  return createHash('sha256').update(str, 'utf8').digest('hex');
}

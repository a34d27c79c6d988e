package dev.idempotency;

/**
 * Who one call is, worked out once before it claims anything ({@code docs/engine.md}, state {@code PrepareKey}): its
 * operation, its key as people may read it (in events, exceptions and logs), the hash of its key in its scope (the
 * store's key), and the fingerprint of its arguments (what a replay must match). Immutable: its arrays are never
 * changed once made, and every step of the call reads it as it is.
 *
 * @param operation   the operation's name
 * @param readable    the normalized key, escaped where it needs to be
 * @param keyHash     the hash of operation, scope and normalized key
 * @param fingerprint the fingerprint of the call's arguments, ignored ones left out
 */
record CallIdentity(String operation, String readable, byte[] keyHash, byte[] fingerprint) {
}

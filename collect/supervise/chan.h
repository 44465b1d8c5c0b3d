/* chan.h - the authenticated record channel between a worker and the
 * collecting process (DESIGN.md 5a step 7a).
 *
 * The worker runs a candidate in its own address space, and the candidate
 * can write to any file descriptor the worker holds, the record pipe
 * included.  So every line the worker sends carries an HMAC-SHA256 of its
 * sequence number and its text under a key of 32 random bytes that the
 * collecting process makes for each pair and hands over on a pipe of its
 * own before the candidate is loaded.  A line that does not authenticate,
 * or arrives out of sequence, is evidence of tampering and never data.
 *
 * A line on the wire: 64 lower-case hex digits of the MAC, one space, the
 * JSON text, a newline.  The MAC covers the 8-byte big-endian sequence
 * number (0 for the first line of a worker) followed by the JSON text, so
 * that a replayed, dropped or reordered line fails too.  No CUDA. */
#ifndef KBV_CHAN_H
#define KBV_CHAN_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"

#define CHAN_KEY_LEN 32
#define CHAN_MAC_HEX 64
/* The worker's file descriptor on which the key arrives (then closed). */
#define CHAN_KEY_FD 4

/* Fills key with CHAN_KEY_LEN bytes from the kernel's random source. */
int chan_new_key(unsigned char key[CHAN_KEY_LEN], kbv_err *e);

/* hex (CHAN_MAC_HEX + 1 bytes, NUL-terminated) = HMAC-SHA256(key, seq || text). */
int chan_mac(const unsigned char key[CHAN_KEY_LEN], uint64_t seq, const char *text, size_t len,
             char hex[CHAN_MAC_HEX + 1], kbv_err *e);

/* Splits a received line into its JSON text (*text, *text_len point into
 * line) and checks its MAC for sequence number seq: 1 when it
 * authenticates, 0 when it does not (a malformed line included).  The
 * comparison takes the same time wherever the MACs differ. */
int chan_open(const unsigned char key[CHAN_KEY_LEN], uint64_t seq, const char *line, size_t len,
              const char **text, size_t *text_len);

#endif

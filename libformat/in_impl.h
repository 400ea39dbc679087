/* in_impl.h — the inside of nytp_in, for the library's own hot paths
 * (the reader decodes straight from the window).  Not a public header. */
#ifndef NYTP_IN_IMPL_H
#define NYTP_IN_IMPL_H

#include <pthread.h>
#include <sys/types.h>
#include <zlib.h>
#ifdef NYTP_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include "nytp/io.h"

/* Inflated data arrives in blocks.  Each slot holds one block after a
 * headroom into which the unread tail of the previous block is copied, so
 * a chunk that straddles two blocks is still contiguous. */
#define NYTP_IN_BLOCK (1024u * 1024u)
#define NYTP_IN_HEADROOM (64u * 1024u)
#define NYTP_IN_SLOTS 3

enum slot_state { SLOT_FREE, SLOT_FILLED, SLOT_INUSE };

struct nytp_in_slot {
    uint8_t *mem;           /* NYTP_IN_HEADROOM + NYTP_IN_BLOCK bytes */
    size_t len;             /* inflated bytes at mem + NYTP_IN_HEADROOM */
    enum slot_state state;
    int status;             /* NYTP_OK: more follows; NYTP_END: the zlib
                               stream ended here; < 0: error after len bytes */
    nytp_error err;
};

/* The producer: inflates into slots, on its own thread or, when there is
 * none, on the consumer's when it needs a block. */
struct nytp_inflater {
    z_stream zs;
    bool zs_live;           /* inflateInit done: inflateEnd at the end */
    /* ISA-L inflates while it can; on anything but a clean end (corrupt or
     * cut data) zlib inflates the stream again from its start, skipping the
     * bytes ISA-L put out, so every error is zlib's, word for word. */
    bool isal;
#ifdef NYTP_HAVE_ISAL
    struct inflate_state *is;
#endif
    uint64_t isal_out;      /* bytes ISA-L put out so far */
    off_t file_start;       /* fd input: file position of the stream, or -1 */
    bool rereading;         /* fd input: zlib's second pass reads with pread */
    off_t reread_pos;
    uint8_t *zin;           /* compressed bytes read from fd */
    size_t zin_cap;
    const uint8_t *mem_next; /* memory input: bytes not yet given to zlib */
    size_t mem_left;
    bool input_eof, done;
    unsigned produced, consumed; /* slot sequence numbers */
    struct nytp_in_slot slots[NYTP_IN_SLOTS];

    bool may_thread;        /* a producer thread may start (take_slot) */
    bool threaded, stop;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

struct nytp_in {
    /* The window: data[pos..lim) is buffered and unread.  data points into
     * own, into a slot, or at the caller's memory (plain memory input). */
    const uint8_t *data;
    size_t pos, lim;
    uint64_t base;          /* stream offset of data[0] */
    uint8_t *own;           /* plain reading, and chunks bigger than a slot */
    size_t cap;

    int fd;                 /* -1 for memory input */
    bool close_fd;
    bool eof;               /* plain input: nothing more to read */
    const uint8_t *mem;
    size_t mem_len;

    bool inflating, zend, threads;
    bool isal;              /* inflate with ISA-L (NYTP_INFLATE=isal|zlib) */
    uint64_t deflate_start;
    int cur_slot;           /* slot the window points into, or -1 */
    nytp_error zerr;        /* reported once the bytes before it are read */
    struct nytp_inflater *z;
};

#endif

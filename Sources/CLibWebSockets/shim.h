#ifndef LIVEBRIDGE_CLIBWEBSOCKETS_SHIM_H
#define LIVEBRIDGE_CLIBWEBSOCKETS_SHIM_H
// What Swift cannot import from libwebsockets directly, as prefixed static inline functions.
#include <libwebsockets.h>

/// LWS_PRE is a macro: the headroom libwebsockets needs before every buffer given to lws_write.
static inline size_t clws_pre(void) { return LWS_PRE; }

/// A timer that knows its owner, so one C callback can find the Swift object (lws_container_of).
typedef struct clws_timer {
    lws_sorted_usec_list_t sul;
    void *owner;
} clws_timer;

static inline void *clws_timer_owner(lws_sorted_usec_list_t *sul) {
    return ((clws_timer *)sul)->owner;
}


#endif

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

// The event loop's timers on a timerfd (TimerDescriptor): <sys/timerfd.h> is not in Swift's Glibc module.
#include <sys/timerfd.h>
#include <stdint.h>
#include <unistd.h>

/// A non-blocking, close-on-exec timerfd on the monotonic clock; -1 on failure.
static inline int clws_timerfd_make(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }

/// Fires once after `seconds` and `nanoseconds` (both 0: disarmed). 0, or -1 with errno.
static inline int clws_timerfd_arm(int fd, long seconds, long nanoseconds) {
    struct itimerspec when = { 0 };
    when.it_value.tv_sec = seconds;
    when.it_value.tv_nsec = nanoseconds;
    return timerfd_settime(fd, 0, &when, NULL);
}

// Descriptors of other libraries watched by the loop (DescriptorWatch): one epoll set, one libwebsockets slot for all.
// Here because epoll_event is a packed struct Swift does not import whole.
#include <sys/epoll.h>

/// A close-on-exec epoll set; -1 on failure.
static inline int clws_epoll_make(void) { return epoll_create1(EPOLL_CLOEXEC); }

/// Adds `fd` to the set for reading (level-triggered). 0, or -1 with errno.
static inline int clws_epoll_add(int set, int fd) {
    struct epoll_event event = { 0 };
    event.events = EPOLLIN;
    event.data.fd = fd;
    return epoll_ctl(set, EPOLL_CTL_ADD, fd, &event);
}

/// Takes `fd` out of the set.
static inline int clws_epoll_remove(int set, int fd) { return epoll_ctl(set, EPOLL_CTL_DEL, fd, NULL); }

/// Up to `capacity` (at most 32) readable descriptors without waiting; the count, or -1.
static inline int clws_epoll_ready(int set, int *fds, int capacity) {
    struct epoll_event events[32];
    if (capacity > 32) capacity = 32;
    int count = epoll_wait(set, events, capacity, 0);
    for (int i = 0; i < count; i++) fds[i] = events[i].data.fd;
    return count;
}

/// Empties a timerfd that fired.
static inline void clws_timerfd_drain(int fd) { uint64_t expirations; (void)!read(fd, &expirations, sizeof expirations); }

#endif

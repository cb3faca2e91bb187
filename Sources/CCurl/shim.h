#ifndef LIVEBRIDGE_CCURL_SHIM_H
#define LIVEBRIDGE_CCURL_SHIM_H
// curl_easy_setopt / curl_easy_getinfo are variadic: one typed wrapper per argument kind.
#include <curl/curl.h>

static inline CURLcode ccurl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_write_function(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f);
}
static inline CURLcode ccurl_setopt_header_function(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f);
}
static inline CURLMcode ccurl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLcode ccurl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode ccurl_multi_setopt_pointer(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode ccurl_multi_setopt_socket_function(CURLM *m, int (*f)(CURL *, curl_socket_t, int, void *, void *)) {
    return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f);
}
static inline CURLMcode ccurl_multi_setopt_timer_function(CURLM *m, int (*f)(CURLM *, long, void *)) {
    return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, f);
}

// The multi handle's socket interface driven from one epoll set (HostedTransfers): the sockets libcurl asks to be
// watched. Here because epoll_event is a packed struct Swift does not import whole.
#include <sys/epoll.h>
#include <errno.h>

/// Watches `fd` for `what` (CURL_POLL_IN, _OUT, _INOUT; CURL_POLL_REMOVE forgets it). 0, or -1 with errno.
/// `known`: the set has it already (the caller marked it with curl_multi_assign at its add; libcurl forgets the mark
/// at its removal), so it is changed, not first tried as new. The other way is the fallback, should the mark be wrong.
static inline int ccurl_epoll_watch(int set, int fd, int what, int known) {
    if (what == CURL_POLL_REMOVE) return epoll_ctl(set, EPOLL_CTL_DEL, fd, NULL);
    struct epoll_event event = { 0 };
    if (what & CURL_POLL_IN) event.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) event.events |= EPOLLOUT;
    event.data.fd = fd;
    if (epoll_ctl(set, known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event) == 0) return 0;
    if (errno != (known ? ENOENT : EEXIST)) return -1;
    return epoll_ctl(set, known ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event);
}

/// Up to `capacity` (at most 32) ready descriptors without waiting: each one's fd and CURL_CSELECT_* flags. The
/// count, or -1.
static inline int ccurl_epoll_ready(int set, int *fds, int *flags, int capacity) {
    struct epoll_event events[32];
    if (capacity > 32) capacity = 32;
    int count = epoll_wait(set, events, capacity, 0);
    for (int i = 0; i < count; i++) {
        fds[i] = events[i].data.fd;
        flags[i] = ((events[i].events & EPOLLIN) ? CURL_CSELECT_IN : 0)
                 | ((events[i].events & EPOLLOUT) ? CURL_CSELECT_OUT : 0)
                 | ((events[i].events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
    }
    return count;
}

/// A close-on-exec epoll set; -1 on failure.
static inline int ccurl_epoll_make(void) { return epoll_create1(EPOLL_CLOEXEC); }

#endif

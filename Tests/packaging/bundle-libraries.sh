#!/usr/bin/env bash
# make dist: the shared libraries the binary in FOLDER needs that are not glibc's (libwebsockets, libcurl, libyaml and
# theirs: OpenSSL, nghttp2, Kerberos…) copied into FOLDER/lib, where the binary's run path ($ORIGIN/lib, DT_RPATH,
# set by make release, so it covers their own dependencies too) finds them first. glibc, libgcc_s and libstdc++ stay
# the system's: every glibc Linux has them, newer ones backwards compatible. OpenSSL's configuration and CA store,
# Kerberos' and the resolver's files are read from the system, where they are.
set -euo pipefail
FOLDER=$1
readelf -d "$FOLDER/livebridge" | grep -q 'RPATH.*\$ORIGIN/lib' \
    || { echo "dist: FAILED: $FOLDER/livebridge has no \$ORIGIN/lib run path (make release sets it)"; exit 1; }
mkdir -p "$FOLDER/lib"
ldd "$FOLDER/livebridge" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r name path; do
    case "$name" in
        linux-vdso.so.*|ld-linux*|libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*|libutil.so.*|libgcc_s.so.*|libstdc++.so.*) ;;
        *) install -m 644 "$path" "$FOLDER/lib/$name" ;;
    esac
done
echo "dist: bundled $(ls "$FOLDER/lib" | wc -l) libraries ($(du -sh "$FOLDER/lib" | cut -f1)): $(ls "$FOLDER/lib" | tr '\n' ' ')"

#!/usr/bin/env bash
# bench/stage-device-extra.sh - stage the libraries the GPU machine lacks beyond
# libyaml (which ../shared/device/stage brings): jansson and zlib's headers (Kernel
# Tuner caches, schema/ktcache.c) and LAPACKE with its BLAS/LAPACK (the bayes
# strategy's Gaussian process, over OpenBLAS as scripts/deps.sh installs it), and cmocka (tests/unit/test_cuda on the GPU). The GPU machine has no network, so Debian's
# packages are downloaded here (apt-get download, no install) into .device/extra/,
# the git-ignored folder that travels with the tree. Run once after
# ../shared/device/stage, from the project root:
#     bench/stage-device-extra.sh
# then start each command there with:
#     source .device/env.sh && source .device/extra.sh &&
set -eu
cd "$(git rev-parse --show-toplevel)"
[ -d .device ] || { echo "run ../shared/device/stage first" >&2; exit 1; }
mkdir -p .device/extra
(cd .device/extra && apt-get download libjansson4 libjansson-dev zlib1g-dev \
    liblapacke liblapacke-dev liblapack3 liblapack-dev libblas3 libblas-dev \
    libtmglib3 libtmglib-dev libgfortran5 libquadmath0 libcmocka0 libcmocka-dev \
    libopenblas0-serial 2>&1 | { grep -v '^W: Download is performed unsandboxed' || true; })
cat >.device/extra.sh <<'ENV'
# Sourced on the GPU machine after env.sh: unpack the staged packages into
# /tmp/extra and point pkg-config, the compiler, the linker and the loader at them
# (Debian puts BLAS and LAPACK under blas/ and lapack/, behind alternatives that
# dpkg -x does not make).
d=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/extra
mkdir -p /tmp/extra
for f in "$d"/*.deb; do dpkg -x "$f" /tmp/extra; done
lib=/tmp/extra/usr/lib/x86_64-linux-gnu
# Some .pc files name /usr outright (lapacke's libdir): point every one here, so
# that -L comes first and a system copy of a library (the GPU machine may have
# its own liblapacke, of another LAPACK version) is not the one linked.
for pc in "$lib"/pkgconfig/*.pc; do
    sed -i -e 's#^prefix=.*#prefix=/tmp/extra/usr#' -e 's#^\(libdir\|includedir\)=/usr/#\1=/tmp/extra/usr/#' "$pc"
done
for so in blas/libblas lapack/liblapack; do
    ln -sf "$lib/$so.so.3" "$lib/$(basename $so).so.3"; ln -sf "$lib/$so.so.3" "$lib/$(basename $so).so"
done
# OpenBLAS (serial) under LAPACKE at run time, as scripts/deps.sh installs it
# (the alternatives' choice); the link above keeps the reference names for -l.
for so in libblas.so.3 liblapack.so.3 libopenblas.so.0; do
    [ -e "$lib/openblas-serial/$so" ] && ln -sf "$lib/openblas-serial/$so" "$lib/$so"
done
export PKG_CONFIG_PATH=$lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export CPATH=/tmp/extra/usr/include${CPATH:+:$CPATH}
export LIBRARY_PATH=$lib${LIBRARY_PATH:+:$LIBRARY_PATH}
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# pkgconf counts LIBRARY_PATH's folders as system ones and leaves out their -L,
# and gcc searches its own folders before LIBRARY_PATH: so the link names this
# folder first itself (the Makefile puts LDFLAGS before everything it links).
export LDFLAGS="-L$lib${LDFLAGS:+ $LDFLAGS}"
ENV
echo "staged .device/extra/ ($(ls .device/extra | wc -l) packages) + .device/extra.sh"

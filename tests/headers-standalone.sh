#!/bin/sh
# tests/headers-standalone.sh: every installed header compiles on its own.
#
# Each public header (include/fastlock/*.h and the headers it includes
# from the source and the build trees) is included alone, first thing in
# a file, and compiled with -std=c99 -pedantic, -std=c11 -pedantic, as
# C++ (g++ -pedantic), and for i686 when i686-linux-gnu-gcc is installed:
# a header that needs a feature macro, a GNU extension or another header
# the user did not include fails here.  Compilers that are missing are
# reported and skipped; the test fails if any compile fails.
set -u
srcdir=${FL_SRCDIR:-${srcdir:-.}}
srcdir=$(cd "$srcdir" && pwd)
builddir=${FL_BUILDDIR:-$(pwd)}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fl-headers.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failed=0
ran=0

# A cross build's config.h describes the foreign host, which the build
# machine's compilers cannot take: the native build checks the headers.
if [ -n "${FL_TEST_RUNNER:-}" ]; then
  echo "SKIP: headers-standalone: a cross build (FL_TEST_RUNNER set)"
  exit 77
fi

# try NAME COMPILER FLAGS...: compile every header with COMPILER FLAGS.
try() {
  name=$1
  cc=$2
  shift 2
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "skipped: $name ($cc not installed)"
    return
  fi
  for h in "$srcdir"/include/fastlock/*.h; do
    base=${h##*/}
    printf '#include <fastlock/%s>\nint fl_headers_standalone;\n' "$base" >"$scratch/t.c"
    if out=$("$cc" "$@" -Werror -Wall -Wextra -I"$builddir/include" \
             -I"$srcdir/include" -c -o "$scratch/t.o" "$scratch/t.c" 2>&1); then
      echo "ok: $name <fastlock/$base>"
      ran=$((ran + 1))
    else
      echo "FAILED: $name <fastlock/$base>:"
      printf '%s\n' "$out" | head -20
      failed=1
    fi
  done
}

try "C99" "${CC:-gcc}" -std=c99 -pedantic
try "C11" "${CC:-gcc}" -std=c11 -pedantic
try "C++" "${CXX:-g++}" -x c++ -pedantic
try "i686 C99" i686-linux-gnu-gcc -std=c99 -pedantic
test $ran -gt 0 || { echo "no compiler ran"; exit 77; }
exit $failed

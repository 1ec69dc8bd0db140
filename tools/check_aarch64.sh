#!/bin/bash
# Cross-compiles every portable source (all but *_avx2.cc / *_avx512.cc) for aarch64 Linux with the
# clang inside the `ziglang` wheel (pip install ziglang), to keep the ref path building on ARM.
# Run from anywhere; prints each file with diagnostics and exits 1 when there are any.
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -m ziglang version >/dev/null 2>&1; then
  echo "needs the ziglang package: $PYTHON -m pip install ziglang" >&2
  exit 2
fi
object=$(mktemp --suffix=.o)
trap 'rm -f "$object"' EXIT
failed=0
for source in $(find cpp/src -name '*.cc' | grep -v -E '_(avx2|avx512)\.cc$' | sort); do
  diagnostics=$("$PYTHON" -m ziglang c++ -target aarch64-linux-gnu -std=c++17 -O1 -c -o "$object" \
      -DWEBNN_VERSION_STRING='"aarch64-check"' -Icpp/include -Icpp/src "$source" 2>&1 | grep -v "argument unused")
  if [ -n "$diagnostics" ]; then
    echo "== $source"
    echo "$diagnostics"
    failed=$((failed + 1))
  fi
done
echo "aarch64: $failed file(s) with diagnostics"
[ "$failed" -eq 0 ]

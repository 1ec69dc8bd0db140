#!/usr/bin/env bash
# Builds the core and the Python extension with sanitizers, then runs pytest against that build
# (the package staged from python/webnn with the sanitized _core beside it).
#
#   tools/sanitize.sh address,undefined tests/ops tests/test_model_format.py ...
#   tools/sanitize.sh thread tests/test_concurrency_soak.py ...
#
# Every finding aborts the process, so pytest (or the fuzzer subprocess) fails. Kernels are built
# up to WEBNN_SANITIZE_MAX_ISA (default avx2: AVX-512 kernels need far more compiler memory under
# ASan, and most machines here cannot run them). Leak detection is off: CPython frees little at
# exit; tests/test_concurrency_soak.py measures leaks instead (skipped here: ASan's quarantine
# holds freed memory).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: tools/sanitize.sh address,undefined|thread [pytest arguments...]" >&2
  exit 2
fi
kind=$1
shift
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$ROOT/build/sanitize-${kind//,/-}"
case "$kind" in
  address,undefined | address | undefined) runtime=libasan.so ;;
  thread) runtime=libtsan.so ;;
  *) echo "tools/sanitize.sh: unknown sanitizer set '$kind'" >&2; exit 2 ;;
esac

cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DWEBNN_BUILD_PYTHON=ON -DWEBNN_INSTALL_PACKAGE=OFF \
  -DWEBNN_SANITIZE="$kind" -DWEBNN_MAX_ISA="${WEBNN_SANITIZE_MAX_ISA:-avx2}" \
  -Dpybind11_DIR="$(python -m pybind11 --cmakedir)" -DPython_EXECUTABLE="$(command -v python)" > "$BUILD.configure.log"
cmake --build "$BUILD" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" --target _core

STAGE="$BUILD/stage"
rm -rf "$STAGE"
mkdir -p "$STAGE"
cp -r "$ROOT/python/webnn" "$STAGE/webnn"
cp "$BUILD"/_core*.so "$STAGE/webnn/"

# The sanitizer runtime first, and libstdc++ with it: python does not link libstdc++, and ASan's
# __cxa_throw interceptor needs the real one present when it starts.
export LD_PRELOAD
LD_PRELOAD="$(gcc -print-file-name=$runtime) $(gcc -print-file-name=libstdc++.so)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$ROOT/tools/tsan.supp"
# NumPy's OpenBLAS threads (in test references) are not instrumented: TSan reports their handoffs.
export OPENBLAS_NUM_THREADS=1
export PYTHONPATH="$STAGE${PYTHONPATH:+:$PYTHONPATH}"
export WEBNN_SANITIZER="$kind"
cd "$ROOT"
python - <<'EOF'
import webnn, os
assert os.path.dirname(webnn.__file__).endswith("stage/webnn"), webnn.__file__
print(f"sanitized webnn from {os.path.dirname(webnn.__file__)}, kernels up to {webnn._core.detected_isa()}")
EOF
python -m pytest -q -s -p no:cacheprovider "$@"  # -s: a report printed just before exit is not lost

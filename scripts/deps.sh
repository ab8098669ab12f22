#!/usr/bin/env bash
# Installs gpulab's build dependencies on Debian or Ubuntu (the CUDA toolkit must already be
# installed, under /usr/local/cuda). Safe to run again: apt-get skips what is installed.
#   bash scripts/deps.sh          what the build and the tests need
#   bash scripts/deps.sh checks   and what CI's checks add: clang with its sanitizer and
#                                 libFuzzer runtimes, clang-format, jq (for the fuzz corpora),
#                                 chromium (the HTML report's browser test, which skips
#                                 without it)
set -euo pipefail
packages=(cmake ninja-build g++ git libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev
          libedit-dev libsqlite3-dev sqlite3)
if [ "${1:-}" = checks ]; then
  packages+=(clang libclang-rt-dev clang-format jq chromium)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "deps.sh: the CUDA toolkit (nvcc) is not installed: install CUDA 13.0 or later from https://developer.nvidia.com/cuda-downloads (the package cuda-toolkit-13-0 on Debian or Ubuntu), into /usr/local/cuda" >&2
  exit 1
fi

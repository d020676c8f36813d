# Shared helpers for kacc's scripts. Sourced, never run.
# shellcheck shell=bash

KACC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KACC_DEPS_DIR="${KACC_DEPS_DIR:-$HOME/.cache/kacc/deps}"
# Bump when the way dependencies are built changes, so stale caches are not reused.
KACC_DEPS_REVISION=1
KACC_KOKKOS_VERSION=3.4.01
KACC_TRILINOS_SOURCE=trilinos
KACC_TRILINOS_VERSION=13.2.0

kacc_say() { printf '[kacc] %s\n' "$*" >&2; }
kacc_die() {
  printf '[kacc] error: %s\n' "$*" >&2
  exit 1
}

kacc_jobs() { nproc 2>/dev/null || echo 2; }

# The Debian mirror this machine's apt already uses (first URI of a deb822 .sources
# file, else of a one-line sources.list entry), so kacc names no registry host itself.
kacc_debian_mirror() {
  local uri
  uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -v -- '-security' | head -n 1 || true)
  if [ -z "$uri" ]; then
    uri=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\{0,1\}\([^[:space:]]*\).*/\2/p' \
      /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | grep -v -- '-security' | head -n 1 || true)
  fi
  [ -n "$uri" ] || kacc_die "no Debian mirror found in /etc/apt/sources.list{,.d}; kacc reads the one apt uses"
  echo "$uri"
}

# apt-get options that read a private sources list and keep lists and caches under DIR:
# the machine's apt configuration is never changed.
kacc_private_apt_opts() {
  local dir=$1
  echo "-o Dir::Etc::SourceList=$dir/sources.list -o Dir::Etc::SourceParts=/dev/null" \
    "-o Dir::State::Lists=$dir/lists -o Dir::Cache=$dir/cache -o APT::Sandbox::User=root"
}

# Prefix of the cached Kokkos + Kokkos Kernels build for a backend set (openmp|hip|cuda).
kacc_deps_prefix() {
  echo "$KACC_DEPS_DIR/kokkos-${KACC_KOKKOS_VERSION}-$1-r${KACC_DEPS_REVISION}"
}

# True when the user already points CMake at a Kokkos (as Spack and modules do).
kacc_user_has_kokkos() {
  [ -n "${Kokkos_ROOT:-}" ] && return 0
  [ -n "${Kokkos_DIR:-}" ] && return 0
  local p IFS=:
  for p in ${CMAKE_PREFIX_PATH:-}; do
    if ls "$p"/lib*/cmake/Kokkos/KokkosConfig.cmake >/dev/null 2>&1; then return 0; fi
  done
  return 1
}

# Environment (as `env` arguments) for building with Debian's CUDA 11.8 through
# nvcc_wrapper: Debian's nvcc, ptxas and cudafe++ ahead of any other CUDA (a newer
# ptxas, e.g. one in /usr/local/cuda or shims in /usr/local/bin, breaks nvcc 11.8), and
# g++-11 as the host compiler.
kacc_cuda_env() {
  local dir path="/usr/bin:/bin" IFS=:
  for dir in $PATH; do
    case "$dir" in *cuda*) continue ;; esac
    path=$path:$dir
  done
  echo "PATH=$path NVCC_WRAPPER_DEFAULT_COMPILER=g++-11"
}

# Dies unless kacc_cuda_env gives nvcc 11.8 with its own ptxas.
kacc_check_cuda_toolchain() {
  local -a cuda_env
  read -r -a cuda_env <<<"$(kacc_cuda_env)"
  env "${cuda_env[@]}" nvcc --version 2>/dev/null | grep -q 'release 11\.8' ||
    kacc_die "the CUDA build needs Debian's nvcc 11.8 (package nvidia-cuda-toolkit, bookworm non-free): run scripts/kacc-bootstrap --backend cuda as root"
  [ "$(env "${cuda_env[@]}" sh -c 'command -v ptxas')" = /usr/bin/ptxas ] ||
    kacc_die "ptxas on the CUDA build's PATH is not Debian's /usr/bin/ptxas"
  command -v g++-11 >/dev/null || kacc_die "the CUDA build needs g++-11 (Debian package g++-11)"
}

# Shared helpers for kacc's scripts. Sourced, never run.
# shellcheck shell=bash

KACC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KACC_DEPS_DIR="${KACC_DEPS_DIR:-$HOME/.cache/kacc/deps}"
# Bump when the way dependencies are built changes, so stale caches are not reused.
KACC_DEPS_REVISION=1
KACC_KOKKOS_VERSION=3.4.01
KACC_TRILINOS_SOURCE=trilinos
KACC_TRILINOS_VERSION=13.2.0
KACC_KERNELS_VERSION=$KACC_KOKKOS_VERSION
KACC_CXX_STANDARD=17
# Set by kacc_use_kokkos_source; empty for the Debian trilinos source.
KACC_KOKKOS_SOURCE_DIR=""
KACC_KERNELS_SOURCE_DIR=""
KACC_KOKKOS_SOURCE_ID=""
KACC_KERNELS_SOURCE_ID=""
KACC_DEPS_TAG=""

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
  echo "$KACC_DEPS_DIR/kokkos-${KACC_DEPS_TAG:-$KACC_KOKKOS_VERSION}-$1-r${KACC_DEPS_REVISION}"
}

# The first of DIR, DIR/spack-src (a Spack stage) and DIR/packages/NAME (a Trilinos tree)
# whose CMakeLists.txt sets VARIABLE; nothing when none does.
kacc_find_source_root() {
  local dir=$1 name=$2 variable=$3 candidate
  for candidate in "$dir" "$dir/spack-src" "$dir/packages/$name"; do
    if [ -f "$candidate/CMakeLists.txt" ] && grep -qi "^[[:space:]]*set[[:space:]]*([[:space:]]*${variable}[[:space:]]" "$candidate/CMakeLists.txt"; then
      (cd "$candidate" && pwd -P)
      return
    fi
  done
}

# The version a Kokkos or Kokkos Kernels CMakeLists.txt declares (PREFIX_VERSION_MAJOR ...),
# written as Kokkos writes its releases: 4.6.01 up to Kokkos 4, 5.0.0 from Kokkos 5 on.
kacc_source_version() {
  local file=$1/CMakeLists.txt prefix=$2 part value out=()
  for part in MAJOR MINOR PATCH; do
    value=$(sed -n "s/^[[:space:]]*[sS][eE][tT][[:space:]]*([[:space:]]*${prefix}_VERSION_${part}[[:space:]]\+\([0-9]\+\).*/\1/p" "$file" | head -n 1)
    [ -n "$value" ] || return 1
    out+=("$((10#$value))")
  done
  if [ "${out[0]}" -ge 5 ]; then
    printf '%d.%d.%d\n' "${out[0]}" "${out[1]}" "${out[2]}"
  else
    printf '%d.%d.%02d\n' "${out[0]}" "${out[1]}" "${out[2]}"
  fi
}

# What identifies a source tree's contents: g<commit> for a clean git checkout that tracks
# the tree, else h<hash of every file's path and contents> (a tarball, a Spack stage, or
# a checkout with local changes). 12 hex digits; the full value goes to the record.
kacc_source_id() {
  local dir=$1 commit
  if git -C "$dir" ls-files --error-unmatch CMakeLists.txt >/dev/null 2>&1 &&
    [ -z "$(git -C "$dir" status --porcelain --untracked-files=no -- . 2>/dev/null)" ]; then
    commit=$(git -C "$dir" rev-parse HEAD) && {
      echo "g$commit"
      return
    }
  fi
  echo "h$(cd "$dir" && find . -type f ! -path './.git/*' ! -path './.git' -print0 | LC_ALL=C sort -z |
    xargs -0 sha256sum | sha256sum | cut -c1-40)"
}

# Selects a user's Kokkos tree (and optionally Kokkos Kernels tree) for kacc_deps_prefix
# and the build: versions, identities, C++ standard. Dies with what is wrong with a DIR.
kacc_use_kokkos_source() {
  local dir=$1 kdir=$2 std=$3 root kroot="" major
  [ -d "$dir" ] || kacc_die "--kokkos-source $dir: no such directory"
  root=$(kacc_find_source_root "$dir" kokkos Kokkos_VERSION_MAJOR)
  if [ -z "$root" ] || [ ! -f "$root/core/src/Kokkos_Core.hpp" ]; then
    kacc_die "--kokkos-source $dir is not a Kokkos source tree: none of $dir, $dir/spack-src, $dir/packages/kokkos has a CMakeLists.txt that sets Kokkos_VERSION_MAJOR next to core/src/Kokkos_Core.hpp"
  fi
  KACC_KOKKOS_VERSION=$(kacc_source_version "$root" Kokkos) ||
    kacc_die "--kokkos-source $dir: no Kokkos_VERSION_MAJOR/MINOR/PATCH in $root/CMakeLists.txt"
  if [ -n "$kdir" ]; then
    [ -d "$kdir" ] || kacc_die "--kokkos-kernels-source $kdir: no such directory"
    kroot=$(kacc_find_source_root "$kdir" kokkos-kernels KokkosKernels_VERSION_MAJOR)
    [ -n "$kroot" ] ||
      kacc_die "--kokkos-kernels-source $kdir is not a Kokkos Kernels source tree: none of $kdir, $kdir/spack-src, $kdir/packages/kokkos-kernels has a CMakeLists.txt that sets KokkosKernels_VERSION_MAJOR"
  elif [ "$root" = "$(cd "$dir" && pwd -P)/packages/kokkos" ]; then
    # A Trilinos tree carries the matching Kokkos Kernels.
    kroot=$(kacc_find_source_root "$dir" kokkos-kernels KokkosKernels_VERSION_MAJOR)
  fi
  KACC_KOKKOS_SOURCE_DIR=$root
  KACC_KOKKOS_SOURCE_ID=$(kacc_source_id "$root")
  KACC_DEPS_TAG="${KACC_KOKKOS_VERSION}-${KACC_KOKKOS_SOURCE_ID:0:13}"
  if [ -n "$kroot" ]; then
    KACC_KERNELS_VERSION=$(kacc_source_version "$kroot" KokkosKernels) ||
      kacc_die "--kokkos-kernels-source $kdir: no KokkosKernels_VERSION_MAJOR/MINOR/PATCH in $kroot/CMakeLists.txt"
    KACC_KERNELS_SOURCE_DIR=$kroot
    KACC_KERNELS_SOURCE_ID=$(kacc_source_id "$kroot")
    KACC_DEPS_TAG+="-kk${KACC_KERNELS_VERSION}-${KACC_KERNELS_SOURCE_ID:0:13}"
  else
    KACC_KERNELS_VERSION=""
  fi
  # Kokkos 5 is C++20; below it kacc's default stays C++17, the standard kacc is written in.
  major=${KACC_KOKKOS_VERSION%%.*}
  if [ -z "$std" ]; then
    if [ "$major" -ge 5 ]; then std=20; else std=17; fi
  fi
  case "$std" in 17 | 20 | 23) ;; *) kacc_die "--cxx-standard $std: give 17, 20 or 23" ;; esac
  [ "$major" -lt 5 ] || [ "$std" -ge 20 ] ||
    kacc_die "--cxx-standard $std: Kokkos $KACC_KOKKOS_VERSION needs C++20 or newer"
  KACC_CXX_STANDARD=$std
  KACC_DEPS_TAG+="-cxx${std}-$(kacc_compiler_id)"
}

# The host compiler a source build uses ($CXX, else g++) as name-version, e.g. g++-12.2.0:
# prefixes built by different compilers must not be mixed up.
kacc_compiler_id() {
  local cxx=${CXX:-g++} version
  command -v "$cxx" >/dev/null || kacc_die "the C++ compiler '$cxx' (\$CXX) is not on PATH"
  version=$("$cxx" -dumpfullversion 2>/dev/null || "$cxx" -dumpversion 2>/dev/null || echo unknown)
  echo "$(basename "$cxx")-${version}"
}

# Writes PREFIX/kacc-deps.txt: what the prefix was built from (COMPILER: the one Kokkos
# was configured with), for the support table and for telling cached prefixes apart.
kacc_write_deps_record() {
  local prefix=$1 compiler=$2
  {
    echo "kokkos_version=$KACC_KOKKOS_VERSION"
    echo "kokkos_source=${KACC_KOKKOS_SOURCE_DIR:-debian:${KACC_TRILINOS_SOURCE}-${KACC_TRILINOS_VERSION}}"
    echo "kokkos_source_id=${KACC_KOKKOS_SOURCE_ID}"
    echo "kokkos_kernels_version=$KACC_KERNELS_VERSION"
    if [ -z "$KACC_KOKKOS_SOURCE_DIR" ]; then
      echo "kokkos_kernels_source=debian:${KACC_TRILINOS_SOURCE}-${KACC_TRILINOS_VERSION}"
    else
      echo "kokkos_kernels_source=${KACC_KERNELS_SOURCE_DIR:-none}"
    fi
    echo "kokkos_kernels_source_id=${KACC_KERNELS_SOURCE_ID}"
    echo "cxx_standard=$KACC_CXX_STANDARD"
    echo "compiler=$compiler: $("$compiler" --version 2>/dev/null | head -n 1)"
  } >"$prefix/kacc-deps.txt"
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

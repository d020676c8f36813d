#pragma once
/// @file
/// The factorisation engine of kacc::solve::gesv_ir: kacc's portable LU (kacc::lapack
/// getrf/getrs) with the factors stored in the requested format. Another engine (a
/// vendor LAPACK, say) is any class with the same two members, factor and solve, that
/// leaves the matrix it factors unchanged and applies its factors in fp64 arithmetic, and
/// optionally a solve of several columns at once; see kacc_lu.

#include <kacc/lapack.hpp>
#include <kacc/solve/gesv_ir_options.hpp>

namespace kacc {
namespace solve {

/// kacc's LU engine for gesv_ir in execution space Exec: factors an fp64 matrix into LU
/// factors stored in fp64, fp32, fp16 or bf16 (updates computed in fp64) and solves with
/// them. The factors are kept until the next factor call, which reuses their storage when
/// it is of the same size and format (keep one engine to solve many systems of one size).
template <class Exec>
class kacc_lu {
 public:
  using memory_space = typename Exec::memory_space;
  /// The matrix factor() takes.
  using matrix_type = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;
  /// The vectors solve() takes.
  using vector_type = Kokkos::View<double*, memory_space>;

  /// Rounds S to `format` (IEEE overflow: an entry beyond the format's range becomes
  /// infinite) and factors it, P S = L U. Returns getrf's info: 0, or k > 0 for an exact
  /// zero pivot in column k (1-based). S is left unchanged.
  index_type factor(const Exec& exec, const matrix_type& S, factor_format format) {
    format_ = format;
    const index_type n = S.extent(0);
    if (static_cast<index_type>(ipiv_.extent(0)) != n)
      ipiv_ = Kokkos::View<int*, memory_space>("kacc::solve::kacc_lu_pivots", n);
    switch (format) {
      case factor_format::fp64:
        return factor_as(exec, S, lu64_);
      case factor_format::fp32:
        return factor_as(exec, S, lu32_);
      case factor_format::fp16:
        return factor_as(exec, S, lu16_);
      case factor_format::bf16:
        return factor_as(exec, S, lub16_);
    }
    return 0;
  }

  /// v <- (L U)^{-1} P v with the factors of the last factor call, in fp64.
  void solve(const Exec& exec, const vector_type& v) const { solve_in_place(exec, v); }

  /// Each column of V (n x k) solved as solve(exec, v) does, the factors read once for all
  /// columns (kacc::lapack::getrs with several right-hand sides). An engine may leave
  /// this member out: gesv_ir then solves column by column.
  void solve(const Exec& exec, const matrix_type& V) const { solve_in_place(exec, V); }

 private:
  template <class F>
  using factors_type = kacc::View<double**, Kokkos::LayoutLeft, memory_space, StoredAs<F>>;

  // The factors of a format reuse their storage when the extents match: a fresh n x n
  // allocation pays its page faults on first touch (about 0.2 s at n = 8192 in fp32).
  template <class LU>
  index_type factor_as(const Exec& exec, const matrix_type& S, LU& lu) {
    if (lu.extent(0) != S.extent(0) || lu.extent(1) != S.extent(1))
      lu = LU(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::solve::kacc_lu_factors"),
              S.extent(0), S.extent(1));
    kacc::deep_copy(exec, lu, S);
    return lapack::getrf<double>(exec, lu, ipiv_);
  }

  template <class V>
  void solve_in_place(const Exec& exec, const V& v) const {
    switch (format_) {
      case factor_format::fp64:
        lapack::getrs<double>(exec, lu64_, ipiv_, v);
        break;
      case factor_format::fp32:
        lapack::getrs<double>(exec, lu32_, ipiv_, v);
        break;
      case factor_format::fp16:
        lapack::getrs<double>(exec, lu16_, ipiv_, v);
        break;
      case factor_format::bf16:
        lapack::getrs<double>(exec, lub16_, ipiv_, v);
        break;
    }
  }

  factor_format format_ = factor_format::fp64;
  factors_type<double> lu64_;
  factors_type<float> lu32_;
  factors_type<fp16> lu16_;
  factors_type<bf16> lub16_;
  Kokkos::View<int*, memory_space> ipiv_;
};

}  // namespace solve
}  // namespace kacc

#pragma once
/// @file
/// kacc::solve::Jacobi: the diagonal preconditioner M = diag(A), its inverse stored in a
/// chosen format (fp64 by default) and applied in fp64.

#include <kacc/solve/operator.hpp>

#include <string>

namespace kacc {
namespace solve {

namespace Impl {

/// inverse(i) = 1 / A(i, i) (duplicates summed); returns the first row whose diagonal is
/// missing, zero or gives a non-finite inverse, or the row count when there is none.
template <class Matrix, class Inverse>
index_type invert_diagonal(const Matrix& a, const Inverse& inverse) {
  const index_type n = a.num_rows();
  const auto row_map = a.row_map();
  const auto entries = a.entries();
  const typename Matrix::const_values_type values = a.values();
  index_type bad = n;
  Kokkos::parallel_reduce(
      "kacc::solve::Jacobi::diagonal", kacc::Impl::range(typename Matrix::execution_space(), 0, n),
      KOKKOS_LAMBDA(const index_type i, index_type& first_bad) {
        double d = 0;
        for (index_type k = row_map(i); k < index_type(row_map(i + 1)); ++k)
          if (index_type(entries(k)) == i) d += convert<double>(values(k));
        const double inv = 1.0 / d;
        inverse(i) = inv;
        if (!math::isfinite(inv) || d == 0) first_bad = i < first_bad ? i : first_bad;
      },
      Kokkos::Min<index_type>(bad));
  return bad;
}

}  // namespace Impl

/// z = D^-1 r with D = diag(A); 1 / A(i, i) stored in Format (a scaled format holds one
/// scale for the whole vector), read in fp64.
template <class Format = double, class Device = typename Kokkos::DefaultExecutionSpace::device_type>
class Jacobi {
 public:
  using device_type = Device;
  using memory_space = typename Device::memory_space;
  /// The inverse diagonal as stored.
  using values_type = kacc::View<double*, Device, kacc::StoredAs<Format>>;
  /// The same, read only.
  using const_values_type = kacc::View<const double*, Device, kacc::StoredAs<Format>>;

  /// Takes the diagonal of a square CsrMatrix (any value format). Throws
  /// std::invalid_argument when A is not square or a diagonal entry is missing, zero or
  /// not finite (the first such row is named).
  template <class A, class F, class O, class S, class D>
  explicit Jacobi(const sparse::CsrMatrix<A, F, O, S, D>& a) {
    using Matrix = sparse::CsrMatrix<A, F, O, S, D>;
    static_assert(std::is_same<typename Matrix::memory_space, memory_space>::value,
                  "kacc::solve::Jacobi: A must live in the preconditioner's memory space");
    if (a.num_rows() != a.num_cols())
      detail::fail("Jacobi", "A must be square; it is " + std::to_string(a.num_rows()) + " x " +
                                 std::to_string(a.num_cols()));
    const index_type n = a.num_rows();
    const Kokkos::View<double*, Device> inverse("kacc::solve::Jacobi::inverse_fp64", n);
    const index_type bad = Impl::invert_diagonal(a, inverse);
    if (bad < n)
      detail::fail("Jacobi", "row " + std::to_string(bad) +
                                 " of A has a zero, missing or non-finite diagonal entry");
    inverse_ = values_type(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::solve::Jacobi::inverse"), n);
    kacc::deep_copy(inverse_, inverse);
  }

  /// z = D^-1 r in fp64 for r of any format. Throws std::invalid_argument when r or z
  /// does not have one entry per row of A.
  template <class Exec, class R, class Z>
  void apply(const Exec& exec, const R& r, const Z& z) const {
    static_assert(is_view_v<R> && is_view_v<Z> && R::rank == 1 && Z::rank == 1,
                  "kacc::solve::Jacobi::apply: r and z must be rank-1 views");
    KACC_REQUIRE_ACCESSIBLE(Exec, Z, "kacc::solve::Jacobi::apply", "z");
    if (r.extent(0) != rows() || z.extent(0) != rows())
      detail::fail("Jacobi::apply", "r has " + std::to_string(r.extent(0)) + " and z " +
                                        std::to_string(z.extent(0)) + " entries; A has " +
                                        std::to_string(rows()) + " rows");
    using ZV = typename Z::non_const_value_type;
    const const_values_type inverse = inverse_;
    Kokkos::parallel_for(
        std::string("kacc::solve::Jacobi::apply[") + format_name<Format>() + "]",
        kacc::Impl::range(exec, 0, rows()), KOKKOS_LAMBDA(const index_type i) {
          z(i) = convert<ZV>(convert<double>(inverse(i)) * convert<double>(r(i)));
        });
  }

  /// Rows of A.
  std::size_t rows() const { return inverse_.extent(0); }
  /// 1 / A(i, i) as stored.
  const values_type& inverse_diagonal() const { return inverse_; }

 private:
  values_type inverse_;
};

}  // namespace solve
}  // namespace kacc

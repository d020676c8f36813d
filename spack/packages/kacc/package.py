# Spack recipe for kacc. Use it from a clone of kacc:
#
#   spack repo add ./spack
#   spack install kacc                        # Kokkos with its default (Serial) backend
#   spack install kacc +openmp                # ... with OpenMP
#   spack install kacc +cuda cuda_arch=80     # Kokkos +cuda (+cuda_lambda below 5) for sm_80
#   spack install kacc +rocm amdgpu_target=gfx90a
#   spack install kacc +view_property ^kokkos@5:  # Kokkos::View<T, kacc::StoredAs<F>> too
#
# To build your working copy instead of the git repository:
#   spack develop --path $PWD kacc@main && spack install kacc@main

from spack.package import *


class Kacc(CMakePackage, CudaPackage, ROCmPackage):
    """Mixed-precision accessor kernels for Kokkos: data stored compact (fp32, fp16,
    bf16, scaled integers) and computed in fp64, through views that convert in
    registers. Header-only; BLAS and sparse kernels for memory-bound workloads."""

    homepage = "https://github.com/kacc-project/kacc"
    git = "https://github.com/kacc-project/kacc.git"

    version("main", branch="main")
    version("0.1.0", branch="main", preferred=True)

    # kacc relies on Kokkos for its backends, as Kokkos Kernels and ArborX do: the
    # backend variants below only request them from Kokkos.
    variant("openmp", default=False, description="Require the Kokkos OpenMP backend")
    variant(
        "kokkoskernels",
        default=True,
        description="Kokkos Kernels interop (CrsMatrix conversion) and peer benchmarks",
    )
    variant("tests", default=False, description="Build the unit tests (GoogleTest, MPFR)")
    variant(
        "perf_tests",
        default=False,
        description="Build perf_tests and the roofline (Google Benchmark, fmt, MPFR, OpenBLAS)",
    )
    variant("examples", default=False, description="Build the example programs")
    variant(
        "view_property",
        default=False,
        description="Require Kokkos::View<T, kacc::StoredAs<F>> as a Kokkos View "
        "(kacc/core/kokkos_view_property.hpp; needs Kokkos 5's mdspan View hooks)",
    )

    depends_on("cmake@3.16:", type="build")

    # What was built and tested on which Kokkos: the README's Kokkos support table.
    depends_on("kokkos@3.4:5")
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos-kernels@3.4:5", when="+kokkoskernels")
    # read_matrix_market reads .mtx.gz; kacc::kacc links zlib (KACC_ENABLE_ZLIB).
    depends_on("zlib-api")

    # kacc is C++17 and compiles with the standard Kokkos was built with (its CMake takes
    # Kokkos_CXX_STANDARD): Spack's Kokkos 3.x may be C++14, 4.x is C++17 or 20, and 5.x
    # is C++20 only (Kokkos' own recipe allows no other cxxstd there).
    conflicts("^kokkos@:3 cxxstd=11", msg="kacc needs a Kokkos built with C++17 or newer")
    conflicts("^kokkos@:3 cxxstd=14", msg="kacc needs a Kokkos built with C++17 or newer")

    # The View hooks (customize_view_arguments and the accessor hooks) are in Kokkos 5's
    # mdspan-based View: 4.6.01 has none, 4.7.1 turned the mdspan View off again (4.7.0 was
    # not tried), so 4.x is refused.
    # kacc's CMake checks for them too (KACC_REQUIRE_KOKKOS_VIEW_PROPERTY).
    conflicts(
        "+view_property",
        when="^kokkos@:4",
        msg="Kokkos::View<T, kacc::StoredAs<F>> needs the View hooks of Kokkos 5",
    )

    # CUDA: kacc's kernels are KOKKOS_LAMBDAs, so Kokkos needs device lambdas, and the
    # architecture kacc is asked for is the one Kokkos is built for.
    # Kokkos 5 has device lambdas always on and no cuda_lambda variant any more.
    depends_on("kokkos+cuda", when="+cuda")
    depends_on("kokkos+cuda_lambda", when="+cuda ^kokkos@:4")
    depends_on("kokkos-kernels+cuda", when="+cuda+kokkoskernels")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(
            "kokkos+cuda cuda_arch={0}".format(_arch), when="+cuda cuda_arch={0}".format(_arch)
        )
    conflicts("+cuda", when="cuda_arch=none", msg="give a cuda_arch, e.g. cuda_arch=80")

    # ROCm: Kokkos' HIP backend, for the AMD GPU targets kacc is asked for.
    depends_on("kokkos+rocm", when="+rocm")
    for _target in ROCmPackage.amdgpu_targets:
        depends_on(
            "kokkos+rocm amdgpu_target={0}".format(_target),
            when="+rocm amdgpu_target={0}".format(_target),
        )
    conflicts("+rocm", when="amdgpu_target=none", msg="give an amdgpu_target, e.g. gfx90a")
    conflicts("+cuda", when="+rocm", msg="Kokkos builds one device backend at a time")

    # Test and benchmark programs only; the library itself needs nothing but Kokkos.
    depends_on("googletest", when="+tests")
    depends_on("mpfr", when="+tests")
    depends_on("mpfr", when="+perf_tests")
    depends_on("benchmark", when="+perf_tests")
    depends_on("fmt", when="+perf_tests")
    depends_on("openblas", when="+perf_tests")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define_from_variant("KACC_ENABLE_KOKKOSKERNELS", "kokkoskernels"),
            self.define_from_variant("KACC_ENABLE_TESTS", "tests"),
            self.define_from_variant("KACC_ENABLE_PERF_TESTS", "perf_tests"),
            self.define_from_variant("KACC_ENABLE_EXAMPLES", "examples"),
            self.define_from_variant("KACC_REQUIRE_KOKKOS_VIEW_PROPERTY", "view_property"),
            # Spack passes the flags for spec.target; -march=native would tie kacc's
            # own programs to the build host.
            self.define("KACC_ENABLE_NATIVE", False),
        ]
        if spec.satisfies("+kokkoskernels"):
            args.append(self.define("KokkosKernels_ROOT", spec["kokkos-kernels"].prefix))

        # Compile with the compiler Kokkos wants (nvcc_wrapper for CUDA, hipcc for HIP),
        # and fail at configure time if Kokkos lacks the backend asked for.
        if spec.satisfies("^kokkos+rocm"):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["hip"].hipcc))
        else:
            args.append(self.define("CMAKE_CXX_COMPILER", spec["kokkos"].kokkos_cxx))
        if spec.satisfies("+cuda"):
            args.append(self.define("KACC_REQUIRE_BACKEND", "CUDA"))
        elif spec.satisfies("+rocm"):
            args.append(self.define("KACC_REQUIRE_BACKEND", "HIP"))
        elif spec.satisfies("+openmp"):
            args.append(self.define("KACC_REQUIRE_BACKEND", "OpenMP"))
        return args

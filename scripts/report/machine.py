"""run.json: the machine and the configuration, from the system, the build and the programs."""
import os
import platform
import re
import subprocess

from .data import load_json


def _run(cmd, timeout=10):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r.stdout.strip() if r.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def _first(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def cmake_cache(build_dir):
    cache = {}
    path = os.path.join(build_dir or "", "CMakeCache.txt")
    if build_dir and os.path.isfile(path):
        with open(path) as f:
            for line in f:
                m = re.match(r"^([A-Za-z_][\w.+-]*):[A-Z]+=(.*)$", line.rstrip("\n"))
                if m:
                    cache[m.group(1)] = m.group(2)
    return cache


def _kokkos_from_cmake(kokkos_dir):
    info = {}
    if not kokkos_dir or not os.path.isdir(kokkos_dir):
        return info
    for name in ("KokkosConfigVersion.cmake",):
        p = os.path.join(kokkos_dir, name)
        if os.path.isfile(p):
            m = re.search(r'PACKAGE_VERSION "([^"]+)"', open(p).read())
            if m:
                info["kokkos_version"] = m.group(1)
    for name in ("KokkosConfigCommon.cmake", "KokkosConfig.cmake"):
        p = os.path.join(kokkos_dir, name)
        if os.path.isfile(p):
            m = re.search(r'SET\(Kokkos_DEVICES\s+"?([^")]+)"?\)', open(p).read(), re.IGNORECASE)
            if m:
                info["kokkos_backends"] = [d for d in m.group(1).split(";") if d]
                break
    return info


def gpus():
    out = []
    smi = _run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"])
    out += ["NVIDIA " + l.strip() if not l.startswith("NVIDIA") else l.strip()
            for l in smi.splitlines() if l.strip()]
    rocm = _run(["rocm-smi", "--showproductname"])
    out += [l.split(":", 2)[-1].strip() for l in rocm.splitlines() if "Card series" in l]
    return out


def kacc_version(root):
    try:
        text = open(os.path.join(root, "CMakeLists.txt")).read()
        m = re.search(r"project\(kacc\s+VERSION\s+([\d.]+)", text)
        return m.group(1) if m else "unknown"
    except OSError:
        return "unknown"


def peers(programs):
    """How each peer was threaded: OpenBLAS from blas.json, Kokkos Kernels on Kokkos's own."""
    out = {}
    blas = programs.get("blas", {})
    if "openblas_threads" in blas:
        out["openblas"] = {
            "threads": blas.get("openblas_threads"),
            "threads_requested": blas.get("openblas_threads_requested"),
            "threads_at_start": blas.get("openblas_threads_at_start"),
            "cpus": blas.get("openblas_cpus", ""),
            "kokkos_cpus": blas.get("kokkos_cpus", ""),
            "equal_threads": blas.get("openblas_equal_threads") == "yes",
            "dgemv_speedup_all_threads_over_one":
                blas.get("openblas_dgemv_2048_speedup_all_threads_over_one"),
            "note": blas.get("openblas_note", ""),
        }
    for comp in ("blas", "spmv"):
        if comp in programs and "kokkoskernels" not in out:
            out["kokkoskernels"] = {"threads": programs[comp].get("concurrency"),
                                    "equal_threads": True,
                                    "note": "runs on the Kokkos execution space, as kacc"}
    return out


def gather(root, build_dir, out_dir, settings, components):
    """The merged description. settings: what kacc-report was asked for; components: names."""
    cache = cmake_cache(build_dir)
    programs, problems = {}, {}
    for comp in components:
        data, problem = load_json(os.path.join(out_dir, comp + ".json"))
        if data is not None:
            programs[comp] = data
        if problem and problem != "missing":
            problems[comp + ".json"] = problem
    first = next(iter(programs.values()), {})
    compiler = cache.get("CMAKE_CXX_COMPILER", "")
    build_type = cache.get("CMAKE_BUILD_TYPE", "")
    flags = " ".join(x for x in (cache.get("CMAKE_CXX_FLAGS", ""),
                                 cache.get("CMAKE_CXX_FLAGS_" + build_type.upper(), "")) if x)
    kk = _kokkos_from_cmake(cache.get("Kokkos_DIR"))
    rev = _run(["git", "-C", root, "rev-parse", "--short", "HEAD"]) or first.get("git_revision")
    dirty = _run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"])
    mem = _first("/proc/meminfo", "MemTotal")
    info = {
        "host": platform.node(),
        "cpu": _first("/proc/cpuinfo", "model name") or platform.processor() or "unknown",
        "cpu_logical_cores": os.cpu_count(),
        "memory": mem,
        "gpus": gpus(),
        "os": platform.platform(),
        "execution_space": first.get("execution_space", settings.get("space", "")),
        "requested_space": settings.get("space", ""),
        "threads": settings.get("threads"),
        "concurrency": first.get("concurrency"),
        "kokkos_version": first.get("kokkos_version") or kk.get("kokkos_version", "unknown"),
        "kokkos_backends": kk.get("kokkos_backends", []),
        "kokkos_dir": cache.get("Kokkos_DIR", ""),
        "kokkoskernels_dir": cache.get("KokkosKernels_DIR", ""),
        "compiler": (_run([compiler, "--version"]).splitlines() or [""])[0] if compiler else
        first.get("compiler", "unknown"),
        "compiler_path": compiler,
        "build_type": build_type,
        "cxx_flags": flags or first.get("cxx_flags", ""),
        "native": cache.get("KACC_ENABLE_NATIVE", ""),
        "kacc_version": str(first.get("kacc_version") or kacc_version(root)),
        "git_revision": (rev or "unknown") + ("-dirty" if dirty else ""),
        "level": settings.get("level"),
        "environment": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OMP_PROC_BIND",
                                                   "OMP_PLACES", "CUDA_VISIBLE_DEVICES",
                                                   "HIP_VISIBLE_DEVICES") if k in os.environ},
        "report": settings,
        "peers": peers(programs),
        "programs": programs,
    }
    if problems:
        info["problems"] = problems
    return info

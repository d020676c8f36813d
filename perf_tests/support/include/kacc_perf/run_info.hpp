#pragma once
// Options every perf program shares, and the description of the machine and build that
// goes into each result folder's JSON.
#include <kacc/version.hpp>

#include <Kokkos_Core.hpp>

#include <unistd.h>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

#ifndef KACC_CXX_FLAGS
#define KACC_CXX_FLAGS ""
#endif

namespace kacc_perf {

/// The short git revision of kacc the program was built from ("-dirty" with changes to
/// tracked files, "unknown" outside a git checkout); written at every build.
const char* git_revision();

enum class level { quick, standard, full };

inline const char* level_name(level l) {
  return l == level::quick ? "quick" : l == level::full ? "full" : "standard";
}

struct options {
  level run_level = level::standard;
  std::string out_dir = ".";
  /// Google Benchmark's --benchmark_list_tests was given: the program prints its benchmarks'
  /// names, once each, times none of them and writes no file.
  bool list_only = false;
};

/// Whether a Google Benchmark boolean flag's value means true, as the library reads it: an
/// empty value does, and so does any other but 0, f, n, false, no and off (any case).
inline bool truthy_flag_value(std::string value) {
  for (auto& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (value.size() == 1)
    return std::isalnum(static_cast<unsigned char>(value[0])) && value != "0" && value != "f" &&
           value != "n";
  return value != "false" && value != "no" && value != "off";
}

/// The help a command line asks for.
enum class help_request {
  none,   ///< no help: run
  usage,  ///< --help or -h: the program's own usage, then stop before Kokkos starts
  kokkos  ///< --kokkos-help: Kokkos prints its options when initialised, then stop
};

/// What help argv asks for. --help is kacc's: Kokkos would otherwise answer it too, with its
/// forty lines before the program's usage, so a program checks this before initialising Kokkos.
inline help_request requested_help(int argc, char** argv) {
  help_request asked = help_request::none;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) return help_request::usage;
    if (!std::strcmp(argv[i], "--kokkos-help")) asked = help_request::kokkos;
  }
  return asked;
}

/// The line every program's usage ends with: where Kokkos' own options are.
inline constexpr const char* kokkos_options_hint =
    "Kokkos' options (--kokkos-threads=N, --kokkos-numa=N, ...): run with --kokkos-help\n";

/// Answers the help argv asks for, before the program initialises Kokkos: --help prints
/// `usage` and kokkos_options_hint; --kokkos-help lets Kokkos print its options as it
/// starts. Returns true when it answered (the program then exits 0 without measuring).
inline bool answer_help(int argc, char** argv, const std::string& usage) {
  switch (requested_help(argc, argv)) {
    case help_request::usage:
      std::printf("%s%s", usage.c_str(), kokkos_options_hint);
      return true;
    case help_request::kokkos: {
      Kokkos::ScopeGuard kokkos_prints_its_options(argc, argv);
      return true;
    }
    case help_request::none:
      break;
  }
  return false;
}

/// Takes --quick, --full and --out DIR out of argv; the rest stays for the program, and
/// --benchmark_list_tests (left in argv for Google Benchmark) sets list_only. Unless
/// list_only, creates DIR (and its parents) now, so that a DIR that cannot be made fails
/// before a run of minutes rather than when its files are written.
inline options parse_options(int& argc, char** argv) {
  options o;
  int kept = 1;
  constexpr const char* list_flag = "--benchmark_list_tests";
  const std::size_t list_flag_length = std::strlen(list_flag);
  for (int i = 1; i < argc; ++i) {
    if (!std::strncmp(argv[i], list_flag, list_flag_length) &&
        (argv[i][list_flag_length] == '\0' || argv[i][list_flag_length] == '=')) {
      o.list_only =
          argv[i][list_flag_length] == '\0' || truthy_flag_value(argv[i] + list_flag_length + 1);
    }
    if (!std::strcmp(argv[i], "--quick")) {
      o.run_level = level::quick;
    } else if (!std::strcmp(argv[i], "--full")) {
      o.run_level = level::full;
    } else if (!std::strcmp(argv[i], "--out")) {
      if (i + 1 >= argc) throw std::invalid_argument("--out needs a directory");
      o.out_dir = argv[++i];
    } else if (!std::strncmp(argv[i], "--out=", 6)) {
      o.out_dir = argv[i] + 6;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  if (!o.list_only) {
    std::error_code error;
    std::filesystem::create_directories(o.out_dir, error);
    if (error || !std::filesystem::is_directory(o.out_dir))
      throw std::invalid_argument("--out " + o.out_dir + ": cannot create the directory" +
                                  (error ? " (" + error.message() + ")" : ""));
  }
  return o;
}

/// parse_options, or, when it refuses the arguments, nothing: the reason is printed to
/// stderr after the program's name, and the caller exits.
inline std::optional<options> parse_options_or_report(int& argc, char** argv, const char* program) {
  try {
    return parse_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return std::nullopt;
  }
}

inline std::string read_first_match(const char* path, const char* key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "";
}

inline std::string cpu_model() {
  const std::string m = read_first_match("/proc/cpuinfo", "model name");
  return m.empty() ? "unknown" : m;
}

/// Size of the last-level cache in bytes (0 if unknown). sysfs first: on some virtual
/// machines sysconf reports the host's cache, not the one this machine sees.
inline std::size_t last_level_cache_bytes() {
  std::size_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(in >> text) || text.empty()) continue;
    std::size_t value = std::strtoull(text.c_str(), nullptr, 10);
    const char unit = text.back();
    if (unit == 'K') value <<= 10;
    if (unit == 'M') value <<= 20;
    if (value > best) best = value;
  }
  if (best > 0) return best;
#ifdef _SC_LEVEL3_CACHE_SIZE
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) return static_cast<std::size_t>(l3);
#endif
  return 0;
}

inline std::string json_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    r += c;
  }
  return r;
}

/// True when s is a JSON number as a whole ("12.2.0" or a git hash is not).
inline bool is_json_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() &&
         s.find_first_not_of("0123456789+-.eE") == std::string::npos &&
         (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-');
}

/// JSON object describing machine, Kokkos and build, plus the program's own entries
/// (values are written as JSON strings unless they are JSON numbers, arrays or objects).
inline std::string run_json(const std::string& program,
                            const std::map<std::string, std::string>& extra = {}) {
  using Exec = Kokkos::DefaultExecutionSpace;
  std::ostringstream devices;
  Kokkos::print_configuration(devices, false);
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  std::map<std::string, std::string> fields = {
      {"program", program},
      {"host", host},
      {"cpu", cpu_model()},
      {"execution_space", Exec::name()},
      {"concurrency", std::to_string(Exec().concurrency())},
      {"kokkos_version", std::to_string(KOKKOS_VERSION / 10000) + "." +
                             std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
                             std::to_string(KOKKOS_VERSION % 100)},
      {"kokkos_configuration", devices.str()},
      {"compiler", __VERSION__},
      {"cxx_flags", KACC_CXX_FLAGS},
      {"kacc_version", KACC_VERSION_STRING},
      {"git_revision", git_revision()},
      {"last_level_cache_bytes", std::to_string(last_level_cache_bytes())},
  };
  for (const auto& [k, v] : extra) fields[k] = v;
  std::ostringstream out;
  out << "{\n";
  bool first = true;
  for (const auto& [k, v] : fields) {
    const bool raw = is_json_number(v) || (!v.empty() && (v[0] == '[' || v[0] == '{'));
    out << (first ? "" : ",\n") << "  \"" << json_escape(k)
        << "\": " << (raw ? v : "\"" + json_escape(v) + "\"");
    first = false;
  }
  out << "\n}\n";
  return out.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << text;
}

}  // namespace kacc_perf

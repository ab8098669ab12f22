#include "reports/base/lazy_library.hpp"

#include <cstdlib>

#include <dlfcn.h>
#include <link.h>

#include <fmt/format.h>

namespace gpulab {
namespace {

std::string last_dl_error() {
  const char* text = dlerror();
  return text ? text : "unknown error";
}

// dlopen's message for a file it did not find, as opposed to one it found and could not load
// (a wrong architecture, a missing dependency of its own).
bool not_found(const std::string& error, const std::string& file) {
  return error.rfind(file + ": cannot open shared object file", 0) == 0;
}

// The entries of a ':'-separated list, empty ones left out.
std::vector<std::string> split_list(std::string rest) {
  std::vector<std::string> out;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    if (colon != 0) out.push_back(rest.substr(0, colon));
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
  }
  return out;
}

}  // namespace

LazyLibrary::LazyLibrary(const LazyLibrarySpec& spec, const char* const* functions,
                         std::size_t count)
    : spec_(spec), names_(functions, functions + count) {}

void LazyLibrary::load() {
  const std::string soname = spec_.soname;
  const std::string remedy =
      fmt::format("{}, or add the folder that holds {} to LD_LIBRARY_PATH", spec_.remedy, soname);
  const char* chosen = spec_.override_env ? std::getenv(spec_.override_env) : nullptr;
  bool by_path = false;  // loaded from a folder of its own, not through the loader's search
  if (chosen && *chosen) {
    by_path = std::string(chosen).find('/') != std::string::npos;
    handle_ = dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      error_ = fmt::format(
          "{} is needed {}, but {}={} cannot be loaded ({}): unset {} or name "
          "a {} there",
          spec_.name, spec_.needed_for, spec_.override_env, chosen, last_dl_error(),
          spec_.override_env, soname);
      return;
    }
  } else {
    handle_ = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string error = handle_ ? "" : last_dl_error();
    const std::vector<std::string> dirs = split_list(spec_.dirs ? spec_.dirs : "");
    // Further folders only while the library is not found: one that is found but does not load
    // is the problem to report.
    for (std::size_t i = 0; !handle_ && not_found(error, soname) && i < dirs.size(); ++i) {
      const std::string file = dirs[i] + "/" + soname;
      handle_ = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
      by_path = handle_ != nullptr;
      if (!handle_) {
        const std::string file_error = last_dl_error();
        if (!not_found(file_error, file)) error = file_error;
      }
    }
    if (!handle_) {
      if (not_found(error, soname)) {
        std::string where;
        for (const auto& d : dirs) where += (where.empty() ? "" : ", ") + d;
        error_ =
            fmt::format("{} is needed {}, but {} is not on the library path{}: {}", spec_.name,
                        spec_.needed_for, soname, where.empty() ? "" : " nor in " + where, remedy);
      } else {
        error_ = fmt::format("{} is needed {}, but {} cannot be loaded ({}): {}", spec_.name,
                             spec_.needed_for, soname, error, remedy);
      }
      return;
    }
  }

  link_map* map = nullptr;
  if (dlinfo(handle_, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) path_ = map->l_name;
  // Libraries it opens itself by name (CUPTI its libnvperf_host.so) would not be found in a
  // folder the loader does not search: loaded first from beside it, the library's own dlopen of
  // that name finds them loaded. Where one is not there, the library searches as it would.
  const auto slash = path_.rfind('/');
  if (by_path && slash != std::string::npos) {
    for (const auto& companion : split_list(spec_.companions ? spec_.companions : "")) {
      if (!dlopen((path_.substr(0, slash + 1) + companion).c_str(), RTLD_NOW | RTLD_LOCAL))
        dlerror();
    }
  }
  functions_.reserve(names_.size());
  for (const char* name : names_) {
    dlerror();
    void* f = dlsym(handle_, name);
    if (!f) {
      // Left open (never closed, like a loaded one): the message is what matters now.
      handle_ = nullptr;
      functions_.clear();
      error_ = fmt::format(
          "{} is needed {}, but {} has no {}: it is older than this gpulab "
          "needs; {}",
          spec_.name, spec_.needed_for, path_.empty() ? soname : path_, name, remedy);
      path_.clear();
      return;
    }
    functions_.push_back(f);
  }
}

void LazyLibrary::require() {
  std::call_once(once_, [this] { load(); });
  if (!handle_) throw LibraryMissing(error_);
}

void* LazyLibrary::function(std::size_t index) {
  require();
  return functions_.at(index);
}

bool LazyLibrary::available() noexcept {
  try {
    require();
    return true;
  } catch (...) {
    return false;
  }
}

std::string LazyLibrary::path() { return available() ? path_ : std::string(); }

}  // namespace gpulab

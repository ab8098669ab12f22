#include "reports/report.hpp"

#include <algorithm>

namespace gpulab::report {

const Variant* Report::find_variant(const std::string& name) const {
  auto it = std::find_if(variants.begin(), variants.end(),
                         [&](const Variant& v) { return v.name == name; });
  return it == variants.end() ? nullptr : &*it;
}

const Variant* Report::baseline() const {
  auto it = std::find_if(variants.begin(), variants.end(),
                         [](const Variant& v) { return v.role == Role::baseline; });
  return it == variants.end() ? nullptr : &*it;
}

const Variant* Report::baseline_of(const Variant& v) const {
  const Variant* base = nullptr;
  for (const auto& candidate : variants) {
    if (candidate.role == Role::baseline) base = &candidate;
    if (&candidate == &v) return base;
  }
  return nullptr;
}

std::string Report::subject() const {
  if (!program) return lab.name;
  if (program->argv.empty()) return "program";
  const std::string& path = program->argv.front();
  return path.substr(path.find_last_of('/') + 1);
}

namespace {
template <typename Enum, std::size_t N>
std::optional<Enum> lookup(const char* const (&names)[N], const std::string& s) {
  for (std::size_t i = 0; i < N; ++i)
    if (s == names[i]) return static_cast<Enum>(i);
  return std::nullopt;
}
const char* const kRoles[] = {"baseline", "optimized", "reference", "function"};
const char* const kCheckStatuses[] = {"passed", "failed", "skipped"};
const char* const kTimingStops[] = {"count", "noise", "settled", "timeout"};
const char* const kVariantStatuses[] = {"ok", "failed", "skipped"};
const char* const kActivityKinds[] = {"kernel", "copy", "memset", "migration"};
}  // namespace

const char* to_string(Role role) { return kRoles[static_cast<int>(role)]; }
const char* to_string(CheckStatus status) { return kCheckStatuses[static_cast<int>(status)]; }
const char* to_string(TimingStop stop) { return kTimingStops[static_cast<int>(stop)]; }
const char* to_string(VariantStatus status) { return kVariantStatuses[static_cast<int>(status)]; }

std::optional<Role> role_from_string(const std::string& s) { return lookup<Role>(kRoles, s); }
std::optional<CheckStatus> check_status_from_string(const std::string& s) {
  return lookup<CheckStatus>(kCheckStatuses, s);
}
std::optional<TimingStop> timing_stop_from_string(const std::string& s) {
  return lookup<TimingStop>(kTimingStops, s);
}
std::optional<VariantStatus> variant_status_from_string(const std::string& s) {
  return lookup<VariantStatus>(kVariantStatuses, s);
}
const char* to_string(ActivityKind kind) { return kActivityKinds[static_cast<int>(kind)]; }
std::optional<ActivityKind> activity_kind_from_string(const std::string& s) {
  return lookup<ActivityKind>(kActivityKinds, s);
}

}  // namespace gpulab::report

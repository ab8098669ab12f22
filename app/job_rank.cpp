#include "app/job_rank.hpp"

#include <cstdint>

#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"

namespace gpulab::app {
namespace {

std::optional<std::int64_t> whole_number(
    const std::function<std::optional<std::string>(const std::string&)>& variable,
    const char* name) {
  const auto text = variable(name);
  if (!text) return std::nullopt;
  try {
    const std::int64_t n = parse_integer("", *text);
    if (n >= 0) return n;
  } catch (const UsageError&) {
  }
  return std::nullopt;
}

}  // namespace

const std::vector<RankVariables>& rank_variables() {
  static const std::vector<RankVariables> launchers = {
      {"torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE"},
      {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"MPICH", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
      {"Slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
  };
  return launchers;
}

std::optional<report::RankInfo> detect_rank(
    const std::function<std::optional<std::string>(const std::string&)>& variable,
    const std::string& host) {
  for (const auto& v : rank_variables()) {
    const auto rank = whole_number(variable, v.rank);
    if (!rank) continue;
    report::RankInfo info;
    info.launcher = v.launcher;
    info.rank = *rank;
    info.local_rank = whole_number(variable, v.local_rank);
    info.world_size = whole_number(variable, v.world_size);
    info.host = host;
    return info;
  }
  return std::nullopt;
}

}  // namespace gpulab::app

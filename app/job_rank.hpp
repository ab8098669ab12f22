// Which rank of a job this process is, from the variables each launcher documents for the
// processes it starts: torchrun (RANK, LOCAL_RANK, WORLD_SIZE), Open MPI's mpirun
// (OMPI_COMM_WORLD_RANK, ..._LOCAL_RANK, ..._SIZE), MPICH's and Intel MPI's Hydra (PMI_RANK,
// MPI_LOCALRANKID, PMI_SIZE) and Slurm's srun (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reports/report.hpp"

namespace gpulab::app {

// One launcher's variables: the job's rank, the host's rank, the job's size.
struct RankVariables {
  const char* launcher;
  const char* rank;
  const char* local_rank;
  const char* world_size;
};

// In the order they are read: a torchrun started by srun sees both, and its own are the ranks
// of the processes it starts.
const std::vector<RankVariables>& rank_variables();

// The rank, from the first launcher whose rank variable is set to a whole number (a local rank
// or size that is not one is left out); nullopt outside a job. `host` is this host's name.
std::optional<report::RankInfo> detect_rank(
    const std::function<std::optional<std::string>(const std::string&)>& variable,
    const std::string& host);

}  // namespace gpulab::app

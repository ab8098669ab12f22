// Every diagnosis rule, one file each in this folder (reports/diagnosis/rules/rule.hpp says what a
// rule declares). The walks place them: the kernel tree's branches
// (reports/diagnosis/decision_tree.cpp) and the timeline's
// (reports/diagnosis/timeline_diagnosis.cpp).
#pragma once

#include "reports/diagnosis/rules/rule.hpp"

namespace gpulab::report::walk::rules {

// The kernel tree's: the access pattern,
const Rule& coalescing();
const Rule& dram_excess();
const Rule& shared_banks();
const Rule& local_memory();
const Rule& atomics();
// control flow and waiting,
const Rule& divergence();
const Rule& mio();
const Rule& sync();
const Rule& latency();
// resources and size,
const Rule& occupancy();
const Rule& tail();
const Rule& launch();
// and where the kernel stands against its roofs.
const Rule& at_roof();
const Rule& below_roof();
const Rule& compute_roof();

// The timeline's.
const Rule& transfers();
const Rule& um_faults();
const Rule& launch_gaps();

}  // namespace gpulab::report::walk::rules

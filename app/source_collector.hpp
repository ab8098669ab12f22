// The `source` of a lab's kernels: per-instruction counters from one launch of each variant with
// its code patched to count (cupti/sass_metrics.hpp), then warp-stall samples from one more
// launch of each (cupti/pc_sampling.hpp), and each instruction's line from the cubin captured
// when its module loaded (cupti/cubin_store.hpp). Neither launch is timed: patching and
// sampling change timing.
#pragma once

#include <functional>
#include <vector>

#include "app/session.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::app {

// How to run one variant: `prepare` before each launch (a traced lab prepares its inputs),
// `launch` launches it and waits.
struct VariantLaunch {
  report::Variant* variant;
  std::function<void()> prepare;
  std::function<void()> launch;
};

// Fills the `source` of every kernel of the variants that ran under a function name: all
// variants' patched launches first, then all sampled ones, with the session's SASS metrics and
// sampler (ask for both before the lab's modules load: see Session::pc_sampler). What cannot be
// collected is said in each source's notes, or, where nothing was, in the report's warnings.
void collect_sources(Session& session, report::Report& report,
                     const std::vector<VariantLaunch>& variants);

}  // namespace gpulab::app

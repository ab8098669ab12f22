// How `gpulab run` replays a lab for its counters, and what it does to the caches between the
// passes: closed sets, spelled in one place (app/lab_replay.cpp).
#pragma once

#include <string>
#include <vector>

namespace gpulab::app {

// variant: gpulab replays the variant once per pass (one range per kernel); kernel: CUPTI replays
// each kernel, restoring memory between passes.
enum class LabReplay { variant, kernel };
// all: flush L2 before every replay pass (variant replay only), as ncu does; none: leave the
// caches as the previous pass left them.
enum class CacheControl { all, none };

const char* to_string(LabReplay replay);
const char* to_string(CacheControl control);
inline const std::vector<LabReplay> kLabReplays = {LabReplay::variant, LabReplay::kernel};
inline const std::vector<CacheControl> kCacheControls = {CacheControl::all, CacheControl::none};

// What a run does when --cache-control is not given: flush with variant replay, not with kernel
// replay (CUPTI's kernel replay cannot flush between its passes).
CacheControl default_cache_control(LabReplay replay);

}  // namespace gpulab::app

// Which counters a run collects when --metrics names none: decided here, and only here, for
// `run`, `diagnose LAB`, `selftest` and `profile` alike.
#pragma once

#include <string>

namespace gpulab::app {

struct CounterUse {
  bool traced = false;     // a traced lab or `profile --trace`: diagnosed from its timeline
  bool replayed = true;    // `profile --replay none` replays nothing: no counters at all
  bool diagnosed = false;  // the run is diagnosed (--diagnose, diagnose LAB, selftest)
};

// `asked`: the --metrics text, empty when not given (returned as it is otherwise). Unasked, a
// diagnosed run gets the full set: the diagnosis reads stalls, atomics and the instrumented byte
// counts. A traced run or one that replays nothing gets none; any other, the basic set.
std::string metric_set_for(const std::string& asked, const CounterUse& use);

}  // namespace gpulab::app

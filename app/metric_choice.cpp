#include "app/metric_choice.hpp"

namespace gpulab::app {

std::string metric_set_for(const std::string& asked, const CounterUse& use) {
  if (!asked.empty()) return asked;
  if (use.traced || !use.replayed) return "none";
  return use.diagnosed ? "full" : "basic";
}

}  // namespace gpulab::app

// A kernel's code by source line: each line's instructions and their counters summed, which lines
// are hot, and what their counters say (share of the samples, the top stall reason, sectors per
// request, wavefronts per shared instruction, active threads per instruction).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/source_model.hpp"

namespace gpulab::report {

struct LineRow {
  SourceLine where;  // an inlined instruction counts on its own line, which names its call site
  std::vector<const SassInstruction*> instructions;
  std::map<std::string, double> counters;  // summed over its instructions
};

struct LineView {
  std::vector<LineRow> rows;                         // by file, then line
  std::vector<const SassInstruction*> without_line;  // code without line information
  // The counter hotness is measured by: the stall samples where they were taken, else the
  // instructions executed; empty when the source holds neither.
  std::string weight;
  double total = 0;  // the weight over the whole kernel
};

// The view's weight in `counters` (an instruction's or a line's); 0 where it was not counted.
double weight_of(const std::map<std::string, double>& counters, const LineView& view);

// Borrows `source`'s instructions: keep it alive while the view is used.
LineView lines_of(const KernelSource& source);

// The `n` rows with the largest weight, largest first, of those that hold at least kHotShare of
// the kernel's: a line with less is not where the time goes, however it ranks.
// Where the weight is stall samples, a line also needs kMinLineSamples of them: a share read
// from n samples is uncertain by about sqrt(n) samples (binomial), so a line with 20 is known
// within about a fifth of its own count, and one with 3 could as well hold 0 or 6.
inline constexpr double kHotShare = 0.05;
inline constexpr double kMinLineSamples = 20;
std::vector<const LineRow*> hottest(const LineView& view, std::size_t n);

// What a row's counters say, each where its counters were collected.
struct LineFigures {
  std::optional<double> share;                // of the kernel's weight
  std::string top_stall;                      // the reason with most samples ("long_scoreboard")
  std::optional<double> top_stall_share;      // of the row's samples
  std::optional<double> sectors_per_request;  // global memory
  std::optional<double> wavefronts_per_shared_request;
  std::optional<double> threads_per_instruction;  // active threads per warp instruction
  std::optional<double> divergent_branches;       // where counted
  std::optional<double> samples;                  // stall samples on the row, where taken
  // Fewer than kMinLineSamples: the top stall's share would be noise, and the row is not ranked
  // hot (hottest); views show the count instead.
  bool few_samples = false;
};
LineFigures figures_of(const std::map<std::string, double>& counters, const LineView& view);

// A line's figures from its summed `counters` and the `instructions` summed into them: the same,
// but the sectors per request and the wavefronts per shared request are those of the line's
// worst memory instruction. A line whose load is coalesced (4 sectors a request) and whose store
// is column-strided (32) shows the store's 32, where the mean, 18, would hide both.
LineFigures figures_of(const std::map<std::string, double>& counters,
                       const std::vector<const SassInstruction*>& instructions,
                       const LineView& view);
inline LineFigures figures_of(const LineRow& row, const LineView& view) {
  return figures_of(row.counters, row.instructions, view);
}

}  // namespace gpulab::report

#include "reports/render/render_text.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "reports/derived.hpp"
#include "reports/kernel_name.hpp"
#include "reports/nvtx_filter.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/render_timeline.hpp"
#include "reports/render/table.hpp"
#include "reports/report.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

namespace m = metrics::name;
namespace d = derived;

// Where a counters-table row takes its value from.
enum class Source { raw, derived, attribute };

struct Row {
  const char* label;
  Source source;
  const char* key;  // metric name, derived name, or attribute name below
};

// The curated rows, in reading order: time, DRAM, global access, shared access, local memory,
// occupancy and execution. Rows no kernel has a value for are left out.
const Row kRows[] = {
    {"duration (replay)", Source::raw, m::duration},
    {"DRAM read", Source::raw, m::dram_read},
    {"DRAM write", Source::raw, m::dram_write},
    {"DRAM read / model", Source::derived, d::dram_read_over_model},
    {"DRAM write / model", Source::derived, d::dram_write_over_model},
    {"DRAM bandwidth", Source::derived, d::dram_bandwidth},
    {"DRAM throughput", Source::raw, m::dram_pct},
    {"SM throughput", Source::raw, m::sm_pct},
    {"global ld sectors/request", Source::derived, d::gld_sectors_per_request},
    {"global st sectors/request", Source::derived, d::gst_sectors_per_request},
    {"shared ld wavefronts/inst", Source::derived, d::shld_wavefronts_per_inst},
    {"shared st wavefronts/inst", Source::derived, d::shst_wavefronts_per_inst},
    {"shared excess wavefronts", Source::derived, d::shared_excess_wavefronts},
    {"bank conflicts ld (raw)", Source::raw, m::shld_conflicts},
    {"bank conflicts st (raw)", Source::raw, m::shst_conflicts},
    {"local memory traffic", Source::derived, d::local_bytes},
    {"achieved occupancy", Source::derived, d::achieved_occupancy},
    {"theoretical occupancy", Source::attribute, "theoretical_occupancy"},
    {"threads per instruction", Source::raw, m::threads_per_inst},
    {"warp instructions", Source::raw, m::inst_executed},
    {"L1 hit rate", Source::raw, m::l1_hit_pct},
    {"L2 hit rate", Source::raw, m::l2_hit_pct},
    {"registers / thread", Source::attribute, "registers_per_thread"},
    {"shared memory / block", Source::attribute, "shared_bytes"},
    {"local memory / thread", Source::attribute, "local_bytes_per_thread"},
    {"spill stores (ptxas)", Source::attribute, "spill_store_bytes"},
    {"spill loads (ptxas)", Source::attribute, "spill_load_bytes"},
};

// How many of a profiled program's functions the counter table shows, heaviest first.
constexpr std::size_t kProgramCounterColumns = 6;
// A program's function heads its counter column by its bare name, cut to this width (library
// kernels' full names run to hundreds of characters); the functions table above has the longer
// form, the JSON the whole one.
constexpr std::size_t kProgramColumnWidth = 32;

// Metrics the curated rows do not show on their own (they feed derived rows).
const std::set<std::string> kShownThroughDerived = {
    m::gld_sectors,     m::gld_requests,    m::gst_sectors,     m::gst_requests,
    m::shld_wavefronts, m::shst_wavefronts, m::shld_inst,       m::shst_inst,
    m::local_ld_bytes,  m::local_st_bytes,  m::warps_active_pct};

std::optional<std::string> attribute_cell(const Kernel& k, const std::string& key) {
  const auto& a = k.attributes;
  if (a.block_threads == 0) return std::nullopt;  // attributes were not read
  if (key == "theoretical_occupancy") return units::percent(a.theoretical_occupancy);
  if (key == "registers_per_thread") return std::to_string(a.registers_per_thread);
  if (key == "shared_bytes")
    return units::bytes(static_cast<double>(a.static_shared_bytes + a.dynamic_shared_bytes));
  if (key == "local_bytes_per_thread")
    return units::bytes(static_cast<double>(a.local_bytes_per_thread));
  if (key == "spill_store_bytes" && a.spill_store_bytes)
    return units::bytes(static_cast<double>(*a.spill_store_bytes));
  if (key == "spill_load_bytes" && a.spill_load_bytes)
    return units::bytes(static_cast<double>(*a.spill_load_bytes));
  return std::nullopt;
}

std::optional<std::string> cell(const Kernel& k, Source source, const std::string& key) {
  switch (source) {
    case Source::raw: {
      auto it = k.metrics.find(key);
      if (it == k.metrics.end()) return std::nullopt;
      return units::metric(it->second, unit_of(key));
    }
    case Source::derived: {
      auto it = k.derived.find(key);
      if (it == k.derived.end()) return std::nullopt;
      return units::metric(it->second, unit_of(key));
    }
    case Source::attribute:
      return attribute_cell(k, key);
  }
  return std::nullopt;
}

std::string render_table(const TextTable& table, const Style& style) {
  return style.table == TableStyle::markdown ? "\n" + table.render_markdown() + "\n"
                                             : table.render();
}

struct Column {
  std::string title;
  const Kernel* kernel;
};

// The device in one line: its name, compute capability, SMs and L2, each where it is known (a
// report whose device could not be opened says so rather than "sm_00, 0 SMs").
std::string device_text(const DeviceInfo& dev, const Style& style) {
  if (dev.name.empty() && dev.sm_count == 0) return "device: unknown";
  std::string out = dev.name.empty() ? "unknown device" : shown(dev.name, style);
  if (dev.cc_major > 0) out += fmt::format(" · sm_{}{}", dev.cc_major, dev.cc_minor);
  if (dev.sm_count > 0) out += fmt::format(" · {} SMs", dev.sm_count);
  if (dev.l2_bytes > 0) out += " · " + units::bytes(static_cast<double>(dev.l2_bytes)) + " L2";
  return out;
}

std::string header(const Report& r, const Style& style) {
  const auto& dev = r.device;
  std::string params;
  for (const auto& [name, value] : r.params)
    params += fmt::format(" {}={}", shown(name, style), value);
  std::string out = fmt::format("{} · {}\n", paint(shown(r.subject(), style), Tone::strong, style),
                                shown(r.lab.summary, style));
  out += device_text(dev, style);
  if (dev.roofs.copy_bandwidth > 0)
    out += " · copy roof " + units::bandwidth(dev.roofs.copy_bandwidth) + " measured";
  if (dev.roofs.theoretical_bandwidth > 0)
    out += " (" + units::bandwidth(dev.roofs.theoretical_bandwidth) + " theoretical)";
  out += "\nparams:" + params;
  if (r.work.bytes() > 0) {
    out += fmt::format(" · must move {} read + {} written", units::bytes(r.work.bytes_read),
                       units::bytes(r.work.bytes_written));
  }
  return out + "\n";
}

std::string device_line(const DeviceInfo& dev, const Style& style) {
  if (dev.name.empty()) return "device: unknown (gpulab could not open it after the program)\n";
  return device_text(dev, style) + "\n";
}

// A word of a command line as a shell would need it typed: quoted when it holds anything but
// plain characters.
std::string shell_word(const std::string& word) {
  const bool plain =
      !word.empty() &&
      word.find_first_not_of(
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./=:,+@%") ==
          std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// "rank 1 of 2 (local rank 1) on node7, by torchrun's variables"
std::string rank_line(const RankInfo& k, const Style& style) {
  std::string out = fmt::format("rank {}", k.rank);
  if (k.world_size) out += fmt::format(" of {}", *k.world_size);
  if (k.local_rank) out += fmt::format(" (local rank {})", *k.local_rank);
  if (!k.host.empty()) out += " on " + shown(k.host, style);
  return out + fmt::format(", by {}'s variables\n", shown(k.launcher, style));
}

// A profiled program: what ran, how it ended, and what of it was measured.
std::string program_header(const Report& r, const Style& style) {
  const ProgramInfo& p = *r.program;
  std::string command;
  for (const auto& word : p.argv)
    command += (command.empty() ? "" : " ") + shown(shell_word(word), style);
  const Tone tone = p.exit_code == 0 ? Tone::good : Tone::bad;
  std::string out =
      fmt::format("{} · {} · {} wall\n", paint(command, Tone::strong, style),
                  paint(shown(p.ended, style), tone, style), units::seconds(p.wall_seconds));
  out += device_line(r.device, style);
  if (p.rank) out += rank_line(*p.rank, style);
  out += fmt::format(
      "{} kernel launches, {} profiled ({} replay){} · kernel time {}\n", p.launches,
      p.profiled_launches, shown(p.replay, style),
      p.kernel_filter.empty() ? "" : " · --kernel '" + shown(p.kernel_filter, style) + "'",
      units::seconds(p.kernel_seconds));
  for (const auto& e : p.nvtx_include) out += "--nvtx-include '" + shown(e, style) + "'\n";
  for (const auto& e : p.nvtx_exclude) out += "--nvtx-exclude '" + shown(e, style) + "'\n";
  if (p.capture_range != "none") out += "--capture-range " + shown(p.capture_range, style) + "\n";
  for (const auto& process : p.processes)
    if (!process.note.empty())
      out += fmt::format("process {}: {}\n", process.pid, shown(process.note, style));
  for (const auto& left : p.left_out) out += "left out: " + shown(left, style) + "\n";
  return out;
}

// A profiled program's kernel functions, heaviest first: where its GPU time goes.
constexpr std::size_t kFunctionColumnWidth = 56;
std::string functions_table(const Report& r, const Style& style) {
  TextTable table({"function", "launches", "total", "share", "mean", "min", "max", "profiled"}, 1);
  std::vector<std::string> names;  // cut so that different functions read differently
  for (const auto& v : r.variants)
    if (v.totals) names.push_back(display_name(v.description));
  const auto cut = shortened_apart(names, kFunctionColumnWidth);
  std::size_t row = 0;
  for (const auto& v : r.variants) {
    if (!v.totals) continue;
    const FunctionTotals& f = *v.totals;
    const auto& t = v.timing;
    const bool timed = f.timed_launches > 0;
    table.add_row({shown(cut[row++], style), std::to_string(f.launches),
                   timed ? units::seconds(f.total_seconds) : "-",
                   timed ? units::percent(f.share_of_gpu_time) : "-",
                   timed ? units::seconds(t.mean) : "-", timed ? units::seconds(t.min) : "-",
                   timed ? units::seconds(t.max) : "-", std::to_string(f.profiled_launches)});
  }
  return table.empty() ? "no kernel launches recorded\n" : render_table(table, style);
}

// A profiled program's NVTX ranges, each indented under its parent: the GPU time of the kernels
// launched inside, and its share of the program's kernel time.
std::string ranges_table(const ProgramInfo& p, const Style& style) {
  if (p.ranges.empty()) return "";
  TextTable table({"NVTX range", "launches", "GPU time", "share"}, 1);
  for (const auto& range : p.ranges) {
    const auto parts = nvtx_path_parts(range.path);
    const std::string name = std::string(2 * (parts.size() - 1), ' ') + parts.back();
    table.add_row({shown(name, style), std::to_string(range.launches),
                   units::seconds(range.seconds),
                   p.kernel_seconds > 0 ? units::percent(range.seconds / p.kernel_seconds) : "-"});
  }
  return "\n" + render_table(table, style) +
         "(the launches recorded one by one: each function's first 256 and the profiled ones)\n";
}

std::string flop_rate(double flops_per_second) {
  return units::number(flops_per_second / 1e12) + " TFLOP/s";
}

const Variant* reference_variant(const Report& r) {
  for (const auto& v : r.variants)
    if (v.role == Role::reference && v.timing.median > 0) return &v;
  return nullptr;
}

// How the variants were timed: a fixed count, or adaptive timing with the range of sample
// counts and why each timing stopped (reports/noise_stop.hpp).
std::string timing_line(const Report& r) {
  const Variant* first = nullptr;
  int fewest = 0, most = 0;
  std::map<TimingStop, int> stops;
  for (const auto& v : r.variants) {
    if (v.timing.repeat <= 0) continue;
    if (!first) first = &v;
    fewest = fewest ? std::min(fewest, v.timing.repeat) : v.timing.repeat;
    most = std::max(most, v.timing.repeat);
    ++stops[v.timing.stopped];
  }
  if (!first) return "";
  const std::string cold = first->timing.cold_l2 ? ", L2 flushed before each" : "";
  if (stops.count(TimingStop::count) == stops.size())
    return fmt::format("timing: CUDA events, median of {} after {} warm-up launches{}\n",
                       first->timing.repeat, first->timing.warmup, cold);
  std::string why;
  for (const auto& [stop, n] : stops)
    why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n,
                       stop == TimingStop::noise     ? "below the target noise"
                       : stop == TimingStop::settled ? "settled above it"
                       : stop == TimingStop::timeout ? "stopped by the timeout"
                                                     : "of a fixed count");
  return fmt::format(
      "timing: CUDA events, adaptive: median of {} to {} samples per variant after {} warm-up "
      "launches{} ({})\n",
      units::count(fewest), units::count(most), first->timing.warmup, cold, why);
}

// Columns appear only when they say something: FLOP/s when the lab does arithmetic, "of ref"
// when a reference implementation (cuBLAS, CUB) was timed, DRAM bandwidth unless the variants
// were traced (their time is copies, migrations and launches: the timeline tells it).
std::string timing_table(const Report& r, const Style& style) {
  const bool flops = r.work.flops > 0;
  const Variant* ref = reference_variant(r);
  const bool traced = std::any_of(r.variants.begin(), r.variants.end(),
                                  [](const Variant& v) { return v.timeline.has_value(); });
  std::vector<std::string> head{"variant", "role", "check", "median", "min", "max"};
  if (!traced) head.insert(head.end(), {"eff. bandwidth", "of roof"});
  if (flops) head.push_back("compute");
  head.push_back("speedup");
  if (ref) head.push_back("of " + shown(ref->name, style));
  TextTable table(head, 3);
  for (const auto& v : r.variants) {
    if (v.status == VariantStatus::skipped) {
      table.add_row({shown(v.name, style), to_string(v.role), "skipped"});
      continue;
    }
    const auto& t = v.timing;
    const bool timed = t.repeat > 0 && t.median > 0;
    const Tone tone = v.check.status == CheckStatus::failed ? Tone::bad : Tone::good;
    std::vector<std::string> row{shown(v.name, style),
                                 to_string(v.role),
                                 paint(to_string(v.check.status), tone, style),
                                 timed ? units::seconds(t.median) : "-",
                                 timed ? units::seconds(t.min) : "-",
                                 timed ? units::seconds(t.max) : "-"};
    if (!traced)
      row.insert(row.end(),
                 {v.effective_bandwidth > 0 ? units::bandwidth(v.effective_bandwidth) : "-",
                  v.roof_fraction > 0 ? units::percent(v.roof_fraction) : "-"});
    if (flops) row.push_back(timed ? flop_rate(r.work_of(v).flops / t.median) : "-");
    row.push_back(v.speedup > 0 ? units::ratio(v.speedup) : "-");
    if (ref) row.push_back(timed ? units::percent(ref->timing.median / t.median) : "-");
    table.add_row(row);
  }
  std::string out = render_table(table, style);
  out += timing_line(r);
  return out;
}

// Every kernel each variant launched, by the function a user finds in the source, in ncu and in
// nsys, with its launch shape. Consecutive launches of one kernel with one shape (a traced lab's
// steps and chunks) make one row, with their count.
std::string kernels_table(const Report& r, const Style& style) {
  TextTable table({"variant", "kernel", "function", "grid", "block", "registers"}, 3);
  const auto same = [](const Kernel& a, const Kernel& b) {
    return a.name == b.name && a.function == b.function &&
           a.attributes.grid_blocks == b.attributes.grid_blocks &&
           a.attributes.block_threads == b.attributes.block_threads;
  };
  for (const auto& v : r.variants) {
    for (std::size_t i = 0; i < v.kernels.size();) {
      const Kernel& k = v.kernels[i];
      std::size_t n = 1;
      while (i + n < v.kernels.size() && same(k, v.kernels[i + n])) ++n;
      const auto& a = k.attributes;
      const bool shaped = a.block_threads > 0;
      const std::string name = shown(k.name, style);
      table.add_row({shown(v.name, style), n > 1 ? fmt::format("{} (x{})", name, n) : name,
                     k.function.empty() ? "-" : shown(shown_function(k.function), style),
                     shaped ? units::count(static_cast<double>(a.grid_blocks)) : "-",
                     shaped ? std::to_string(a.block_threads) : "-",
                     a.registers_per_thread > 0 ? std::to_string(a.registers_per_thread) : "-"});
      i += n;
    }
  }
  return table.empty() ? "" : render_table(table, style);
}

std::string check_failures(const Report& r, const Style& style) {
  std::string out;
  for (const auto& v : r.variants) {
    if (v.check.status == CheckStatus::failed)
      out += fmt::format("check failed: {}: {}\n", shown(v.name, style),
                         shown(v.check.message, style));
    if (v.status == VariantStatus::skipped)
      out += fmt::format("skipped: {}: {}\n", shown(v.name, style), shown(v.skip_reason, style));
  }
  return out;
}

std::string counters_table(const Report& r, const Style& style) {
  std::vector<Column> columns;
  std::set<std::string> titles;  // two functions may share a bare name
  const Variant* described = nullptr;
  for (const auto& v : r.variants) {
    if (!v.counters.collected) continue;
    described = described ? described : &v;
    // A program's function: its first profiled launch stands for it (the JSON has every one);
    // its heaviest functions only, or the table would not fit a terminal.
    if (r.program) {
      if (columns.size() < kProgramCounterColumns) {
        const std::string bare = shortened(base_name(v.description), kProgramColumnWidth);
        std::string title = bare;
        for (int n = 2; !titles.insert(title).second; ++n) title = fmt::format("{} #{}", bare, n);
        columns.push_back({shown(title, style), &v.kernels.front()});
      }
      continue;
    }
    for (const auto& k : v.kernels) {
      columns.push_back({shown(v.kernels.size() == 1 ? v.name : v.name + "/" + k.name, style), &k});
    }
  }
  if (columns.empty()) {
    for (const auto& v : r.variants)
      if (!v.counters.note.empty())
        return "counters: not collected: " + shown(v.counters.note, style) + "\n";
    return "";
  }

  std::vector<std::string> head{"counter"};
  for (const auto& c : columns) head.push_back(c.title);
  TextTable table(head);
  auto add = [&](const std::string& label, Source source, const std::string& key) {
    std::vector<std::string> cells{label};
    bool any = false;
    for (const auto& c : columns) {
      auto value = cell(*c.kernel, source, key);
      any = any || value.has_value();
      cells.push_back(value.value_or("-"));
    }
    if (any) table.add_row(cells);
  };
  std::set<std::string> in_rows(kShownThroughDerived);
  for (const auto& row : kRows) {
    add(row.label, row.source, row.key);
    if (row.source == Source::raw) in_rows.insert(row.key);
  }
  // Metrics asked for by name that the curated rows do not cover.
  std::set<std::string> extra;
  for (const auto& c : columns)
    for (const auto& [name, value] : c.kernel->metrics)
      if (!in_rows.count(name)) extra.insert(name);
  for (const auto& name : extra) {
    const auto* traits = metrics::find(name);
    add(shown(traits ? traits->short_name : name, style), Source::raw, name);
  }

  const auto& c = described->counters;
  std::string out =
      r.program
          ? fmt::format(
                "counters: {} set, {} replay pass{} per launch ({} replay; cache control: "
                "{}); the first profiled launch of each function, heaviest first\n",
                shown(c.metric_set, style), c.passes, c.passes == 1 ? "" : "es",
                shown(c.replay, style), shown(c.cache_control, style))
          : fmt::format(
                "counters: {} set, {} replay pass{} per kernel, collected in {} ({} replay; {})\n",
                shown(c.metric_set, style), c.passes, c.passes == 1 ? "" : "es",
                units::seconds(c.collection_seconds), shown(c.replay, style),
                shown(c.cache_control, style));
  return out + render_table(table, style);
}

}  // namespace

std::string render_text(const Report& r, const Style& style) {
  std::string out = r.program ? program_header(r, style) + "\n" + functions_table(r, style) +
                                    ranges_table(*r.program, style)
                              : header(r, style) + "\n" + timing_table(r, style);
  if (const std::string kernels = r.program ? "" : kernels_table(r, style); !kernels.empty())
    out += "\n" + kernels;
  const std::string failures = check_failures(r, style);
  if (!failures.empty()) out += "\n" + failures;
  const std::string timelines = render_timelines(r, style);
  if (!timelines.empty()) out += "\n" + timelines;
  const std::string counters = counters_table(r, style);
  if (!counters.empty()) out += "\n" + counters;
  for (const auto& w : r.warnings) out += "warning: " + shown(w, style) + "\n";
  return out;
}

}  // namespace gpulab::report

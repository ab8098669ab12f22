// `gpulab info`: the device, its roofs, versions, and whether counters can be read.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "app/outputs.hpp"
#include "reports/base/output_file.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/render/table.hpp"
#include "reports/report_json.hpp"
#include "reports/units.hpp"

namespace gpulab::app {
namespace {

std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::string info_text(const report::DeviceInfo& d) {
  report::TextTable t({"device", fmt::format("{}: {}", d.index, d.name)}, 2);
  t.add_row({"compute capability", fmt::format("{}.{}{}", d.cc_major, d.cc_minor,
                                               d.chip.empty() ? "" : " (" + d.chip + ")")});
  t.add_row(
      {"SMs", fmt::format("{} x {} warps, {} shared memory each", d.sm_count, d.max_warps_per_sm,
                          report::units::bytes(static_cast<double>(d.shared_per_sm_bytes)))});
  t.add_row({"SM clock (peak)", report::units::hertz(d.sm_clock_hz)});
  t.add_row({"L2 cache", report::units::bytes(static_cast<double>(d.l2_bytes))});
  t.add_row({"memory", fmt::format("{}, {} clock x {}-bit bus",
                                   report::units::bytes(static_cast<double>(d.global_memory_bytes)),
                                   report::units::hertz(d.memory_clock_hz), d.memory_bus_bits)});
  t.add_row({"bandwidth (theoretical)", report::units::bandwidth(d.roofs.theoretical_bandwidth)});
  t.add_row({"bandwidth (measured)",
             fmt::format("{} device-to-device copy, read + write, 2 x {}",
                         report::units::bandwidth(d.roofs.copy_bandwidth),
                         report::units::bytes(static_cast<double>(d.roofs.copy_bytes)))});
  t.add_row({"driver / runtime", fmt::format("CUDA {} / CUDA {}", version_text(d.driver_version),
                                             version_text(d.runtime_version))});
  t.add_row({"CUPTI API", d.cupti_version ? std::to_string(d.cupti_version)
                                          : std::string("none: libcupti is not loaded")});
  t.add_row({"counters", d.counters_available ? "available (range profiler)"
                                              : "unavailable: " + d.counters_unavailable_reason});
  return t.render();
}

}  // namespace

CLI::App* add_info(CLI::App& root, InfoOptions& options) {
  auto* cmd = root.add_subcommand("info", "Show the GPU, its measured roofs and counter access");
  cmd->add_option("--json", options.json_path, "Also write the device as JSON to FILE")
      ->type_name("FILE");
  add_format_option(*cmd, options.format, kInfoFormats);
  cmd->add_option("--check-metrics", options.check_metrics,
                  "Check which metrics of a set (or list) this device supports");
  return cmd;
}

int run_info(const InfoOptions& options, Session& session, Io& io) {
  if (!options.json_path.empty()) check_output(options.json_path);
  const auto names = options.check_metrics.empty()
                         ? std::vector<std::string>{}
                         : report::metrics::resolve("--check-metrics", options.check_metrics);
  session.probe_counters();
  const auto& device = session.device();
  std::optional<std::vector<std::string>> unsupported;
  if (!names.empty()) unsupported = session.unsupported_metrics(names);

  auto json = report::to_json(device);
  if (unsupported) json["unsupported_metrics"] = *unsupported;
  Io text = text_io(io, {options.json_path});
  if (options.format == OutputFormat::json) {
    text.out << json.dump(2) << "\n";
  } else {
    text.out << info_text(device);
    if (unsupported) {
      text.out << fmt::format("metrics: {} of {} supported\n", names.size() - unsupported->size(),
                              names.size());
      for (const auto& name : *unsupported) text.out << "  unsupported: " << name << "\n";
    }
  }
  return save_outputs({{options.json_path, json.dump(2) + "\n"}}, io);
}

}  // namespace gpulab::app

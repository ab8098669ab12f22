#include "app/lab_runner.hpp"

#include <chrono>
#include <ctime>
#include <iostream>

#include <fmt/format.h>

#include "app/version.hpp"
#include "cupti/metric_catalogue.hpp"
#include "cupti/range_profiler.hpp"
#include "labs/device_buffer.hpp"
#include "labs/harness.hpp"
#include "reports/derived.hpp"

namespace gpulab::app {
namespace {

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void progress(const RunSettings& s, const std::string& line) {
  if (s.progress) std::cerr << "gpulab: " << line << "\n";
}

void check_and_time(labs::LabRun& run, report::Variant& out, const RunSettings& settings,
                    const report::Report& r, cudaStream_t stream, labs::L2Flusher* flusher) {
  run.poison_outputs(stream);
  run.launch(out.name, stream);
  GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  out.check = run.check(out.name);
  if (out.check.status == report::CheckStatus::failed) out.status = report::VariantStatus::failed;

  out.timing = labs::time_launches([&](cudaStream_t s) { run.launch(out.name, s); }, stream,
                                   settings.warmup, settings.repeat, flusher);
  if (r.work.bytes() > 0 && out.timing.median > 0) {
    out.effective_bandwidth = r.work.bytes() / out.timing.median;
    if (r.device.roofs.copy_bandwidth > 0)
      out.roof_fraction = out.effective_bandwidth / r.device.roofs.copy_bandwidth;
  }
}

void set_speedups(report::Report& r) {
  const auto* base = r.baseline();
  if (!base || base->timing.median <= 0) return;
  for (auto& v : r.variants)
    if (v.timing.median > 0) v.speedup = base->timing.median / v.timing.median;
}

// Runs every measured variant's kernels under one profiler batch and files the ranges under
// their kernels, in launch order.
void collect_counters(Session& session, labs::LabRun& run, report::Report& r,
                      const std::vector<std::string>& metric_names, const RunSettings& settings,
                      cudaStream_t stream) {
  std::vector<report::Variant*> profiled;
  std::size_t kernels = 0;
  for (auto& v : r.variants) {
    if (v.status == report::VariantStatus::skipped) continue;
    profiled.push_back(&v);
    kernels += v.kernels.size();
  }
  if (profiled.empty()) return;

  std::string why_not;
  cupti::RangeProfiler* profiler = session.profiler(metric_names, why_not);
  r.device = session.device();  // the profiler fills in the chip name and availability
  const std::string set_name = metrics::is_set_name(settings.metrics) ? settings.metrics : "custom";
  if (!profiler) {
    r.warnings.push_back(why_not + "; timing and correctness are reported without counters");
    for (auto* v : profiled) v->counters.note = why_not;
    return;
  }
  progress(settings, fmt::format("profiling {} kernel(s), {} replay passes each", kernels,
                                 profiler->passes()));
  const auto started = std::chrono::steady_clock::now();
  const auto ranges = profiler->profile(
      [&] {
        for (auto* v : profiled) run.launch(v->name, stream);
        GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
      },
      kernels);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;

  std::size_t next = 0;
  for (auto* v : profiled) {
    for (auto& k : v->kernels) k.metrics = ranges[next++].values;
    v->counters.collected = true;
    v->counters.metric_set = set_name;
    v->counters.passes = profiler->passes();
    v->counters.replay = "kernel";
    v->counters.cache_control = "caches not flushed between replay passes";
    v->counters.collection_seconds = elapsed.count();
  }
}

}  // namespace

report::Report run_lab(Session& session, const labs::Lab& lab, const RunSettings& settings,
                       const std::vector<std::string>& argv) {
  const auto& spec = lab.spec();
  const auto variants = labs::select_variants(spec, settings.variants);
  const auto params = labs::resolve_params(spec, settings.size, settings.params);
  const auto metric_names = metrics::resolve(settings.metrics);

  report::Report r;
  r.tool.version = kVersion;
  r.tool.git_sha = kGitSha;
  r.argv = argv;
  r.created_utc = utc_now();
  r.device = session.device();
  r.lab = {spec.name, spec.topic, spec.summary};
  r.params = params;

  progress(settings, fmt::format("{}: setting up", spec.name));
  auto run = lab.setup(params, settings.seed);
  r.work = run->work();

  labs::CudaStream stream;
  std::unique_ptr<labs::L2Flusher> flusher;
  if (settings.cold) flusher = std::make_unique<labs::L2Flusher>(r.device.l2_bytes);

  for (const auto* vs : variants) {
    report::Variant& out = r.variants.emplace_back();
    out.name = vs->name;
    out.role = vs->role;
    out.description = vs->description;
    if (auto reason = run->skip_reason(vs->name)) {
      out.status = report::VariantStatus::skipped;
      out.skip_reason = *reason;
      out.check.message = *reason;
      continue;
    }
    int index = 0;
    for (const auto& launch : run->kernels(vs->name)) {
      report::Kernel& k = out.kernels.emplace_back();
      k.name = launch.name;
      k.launch_index = index++;
      k.attributes = labs::static_attributes(launch, r.device.max_warps_per_sm);
    }
    progress(settings, fmt::format("{}/{}: check and time", spec.name, vs->name));
    check_and_time(*run, out, settings, r, stream.get(), flusher.get());
  }
  set_speedups(r);
  if (!metric_names.empty())
    collect_counters(session, *run, r, metric_names, settings, stream.get());
  report::derive_all(r);
  return r;
}

}  // namespace gpulab::app

#include "app/lab_runner.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "app/interrupt.hpp"
#include "app/metric_choice.hpp"
#include "app/source_collector.hpp"
#include "app/source_files.hpp"
#include "app/utc_time.hpp"
#include "app/version.hpp"
#include "cupti/activity_tracer.hpp"
#include "cupti/cupti_library.hpp"
#include "cupti/launch_recorder.hpp"
#include "cupti/range_profiler.hpp"
#include "labs/harness/device_buffer.hpp"
#include "labs/harness/harness.hpp"
#include "reports/derived.hpp"
#include "reports/kernel_name.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report.hpp"
#include "reports/timeline.hpp"

namespace gpulab::app {
namespace {

void progress(const RunSettings& s, const std::string& line) {
  if (s.progress) std::cerr << "gpulab: " << line << "\n";
}

// One line rewritten in place ("\r") while the passes run, then ended.
void pass_progress(const RunSettings& s, const std::string& what, int pass, int passes) {
  if (!s.progress) return;
  std::cerr << "\rgpulab: " << what << ": pass " << pass << " of " << passes << std::flush;
  if (pass == passes) std::cerr << "\n";
}

// Adds the wall time since `start` to the report's phase `name` (docs/report-schema.md), and
// restarts the clock.
void add_phase(report::Report& r, const char* name, std::chrono::steady_clock::time_point& start) {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  for (auto& p : r.phases)
    if (p.phase == name) {
      p.seconds += seconds;
      return;
    }
  r.phases.push_back({name, seconds});
}

// Launch counts after the lab's defaults are applied, and whether each launch waits for the
// lab to prepare its inputs (traced labs: see LabRun::prepare). Kernel labs keep their timed
// launches queued back to back.
struct Repetitions {
  int warmup;
  int repeat;
  bool prepared;
  std::optional<report::NoiseRule> until_quiet;  // adaptive timing instead of `repeat`
};

// The kernels a variant declares, with their static attributes and the function's mangled
// name from the runtime (empty for a library's kernel: the launch recorder names those).
std::vector<report::Kernel> declared_kernels(const labs::LabRun& run, const std::string& variant,
                                             int max_warps_per_sm) {
  std::vector<report::Kernel> out;
  for (const auto& launch : run.kernels(variant)) {
    report::Kernel& k = out.emplace_back();
    k.name = launch.name;
    k.launch_index = static_cast<int>(out.size()) - 1;
    k.attributes = labs::static_attributes(launch, max_warps_per_sm);
    k.mangled_name = labs::mangled_name(launch);
  }
  return out;
}

// A library kernel's launch shape, from the recorded launch (the lab kernels' shapes come with
// their static attributes).
void take_shape(report::StaticAttributes& a, const cupti::LaunchRecord& l) {
  if (a.block_threads != 0) return;
  a.block_threads = static_cast<int>(l.block[0] * l.block[1] * l.block[2]);
  a.grid_blocks = std::uint64_t{l.grid[0]} * l.grid[1] * l.grid[2];
  a.dynamic_shared_bytes = l.dynamic_shared_bytes;
}

// Reconciles what the variant declared with what the driver saw it launch. Same count: the
// launches name the library kernels the lab could not name. Another count (a library that
// launches more or fewer kernels than the lab expected): the report lists what was launched,
// keeping a declared kernel's label and attributes where its function matches. No launches
// recorded (no recorder, or the kernels were launched by a CUDA graph): the declaration stands.
void name_kernels(report::Report& r, report::Variant& v,
                  const std::vector<cupti::LaunchRecord>& launched) {
  if (!launched.empty() && launched.size() == v.kernels.size()) {
    for (std::size_t i = 0; i < launched.size(); ++i) {
      report::Kernel& k = v.kernels[i];
      if (k.mangled_name.empty()) k.mangled_name = launched[i].mangled_name;
      take_shape(k.attributes, launched[i]);
    }
  } else if (!launched.empty()) {
    r.warnings.push_back(fmt::format("{}: declared {} kernel(s) but launched {}; the report lists "
                                     "the kernels launched",
                                     v.name, v.kernels.size(), launched.size()));
    std::vector<report::Kernel> declared = std::move(v.kernels);
    std::vector<bool> used(declared.size(), false);
    v.kernels.clear();
    for (const auto& l : launched) {
      report::Kernel k;
      for (std::size_t j = 0; j < declared.size(); ++j) {
        if (!used[j] && declared[j].mangled_name == l.mangled_name) {
          k = declared[j];
          used[j] = true;
          break;
        }
      }
      k.mangled_name = l.mangled_name;
      take_shape(k.attributes, l);
      k.launch_index = static_cast<int>(v.kernels.size());
      v.kernels.push_back(std::move(k));
    }
  }
  for (auto& k : v.kernels) {
    if (!k.mangled_name.empty()) k.function = report::demangle(k.mangled_name);
    if (k.name.empty()) k.name = k.function.empty() ? "kernel" : report::display_name(k.function);
  }
}

// The correctness launch, recorded by the launch recorder when there is one (the kernels it
// launched name the variant's kernels), then the timed launches. Returns whether the recorder
// saw none of the variant's kernels launched one by one (they ran inside a CUDA graph).
bool check_and_time(Session& session, labs::LabRun& run, report::Report& r, report::Variant& out,
                    Repetitions reps, cudaStream_t stream, labs::L2Flusher* flusher,
                    cupti::LaunchRecorder* recorder) {
  // With --source, the checked launch loads the variant's modules while warp-stall sampling is
  // enabled (it sees only those), and the timed ones run with it disabled: enabled, it
  // serializes launches (the cuda-graphs lab's graph took 35% longer on an H100).
  auto clock = std::chrono::steady_clock::now();
  session.resume_sampling();
  run.prepare(out.name);
  run.poison_outputs(stream);
  const auto launch_once = [&] {
    run.launch(out.name, stream);
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  std::vector<cupti::LaunchRecord> launched;
  if (recorder) {
    launched = recorder->record(launch_once);
  } else {
    launch_once();
  }
  name_kernels(r, out, launched);
  add_phase(r, "first launch", clock);  // the module's loading and the launch recorder's cost
  out.check = run.check(out.name);
  if (out.check.status == report::CheckStatus::failed) out.status = report::VariantStatus::failed;
  session.pause_sampling();
  add_phase(r, "checks", clock);

  const auto launch = [&](cudaStream_t s) { run.launch(out.name, s); };
  const auto prepare = reps.prepared ? std::function<void()>([&] { run.prepare(out.name); })
                                     : std::function<void()>();
  out.timing =
      reps.until_quiet
          ? labs::time_until_quiet(launch, stream, reps.warmup, *reps.until_quiet, flusher, prepare)
          : labs::time_launches(launch, stream, reps.warmup, reps.repeat, flusher, prepare);
  add_phase(r, "timing", clock);
  const auto& work = r.work_of(out);
  if (work.bytes() > 0 && out.timing.median > 0) {
    out.effective_bandwidth = work.bytes() / out.timing.median;
    if (r.device.roofs.copy_bandwidth > 0)
      out.roof_fraction = out.effective_bandwidth / r.device.roofs.copy_bandwidth;
  }
  return recorder && launched.empty() && !out.kernels.empty();
}

// Against the variant's own baseline (Report::baseline_of).
void set_speedups(report::Report& r) {
  for (auto& v : r.variants) {
    const report::Variant* base = r.baseline_of(v);
    if (base && base->timing.median > 0 && v.timing.median > 0)
      v.speedup = base->timing.median / v.timing.median;
  }
}

const char* const kFlushedPasses = "all: L2 flushed before every replay pass";
const char* const kWarmPasses = "none: caches not flushed between replay passes";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The counters of one variant, one range per kernel launch. Variant replay: gpulab launches
// the whole variant once per pass, after the lab's prepare (traced labs) and an L2 flush (cache
// control "all"; the pass's first kernel, see RangeProfiler::PassHooks), so that every pass
// starts from the same state. Kernel replay: CUPTI replays each kernel, restoring memory in
// between, with no flush. When the ranges do not match the
// kernels the report lists, the ranges are kept, named by launch order, and the report says so.
void profile_variant(cupti::RangeProfiler& profiler, labs::LabRun& run, report::Report& r,
                     report::Variant& v, const std::string& set_name, const RunSettings& settings,
                     bool traced, cudaStream_t stream, labs::L2Flusher& flusher) {
  const bool flush = settings.cache_control == CacheControl::all;
  const auto launch = [&] {
    run.launch(v.name, stream);
    GPULAB_CUDA_CHECK(traced ? cudaDeviceSynchronize() : cudaStreamSynchronize(stream));
  };
  const auto started = std::chrono::steady_clock::now();
  std::vector<cupti::RangeValues> ranges;
  if (settings.replay == LabReplay::kernel) {
    progress(settings, fmt::format("{}/{}: counters, kernel replay, {} passes per kernel",
                                   r.subject(), v.name, profiler.passes()));
    if (traced) run.prepare(v.name);
    ranges = profiler.profile_kernels(launch, v.kernels.size());
  } else {
    const std::string what = fmt::format("{}/{}: counters", r.subject(), v.name);
    cupti::RangeProfiler::PassHooks hooks;
    hooks.before_pass = [&] {
      if (traced) run.prepare(v.name);
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    };
    if (flush) {
      hooks.first_kernel = [&] {
        flusher.flush(stream);
        GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
      };
    }
    hooks.on_pass = [&](int pass, int passes) { pass_progress(settings, what, pass, passes); };
    ranges = profiler.replay_kernels(launch, v.kernels.size(), hooks);
  }
  if (ranges.size() != v.kernels.size() || profiler.dropped() > 0) {
    r.warnings.push_back(fmt::format(
        "{}: {} kernel(s) listed but {} profiled{}; counters are listed by launch order", v.name,
        v.kernels.size(), ranges.size() + profiler.dropped(),
        profiler.dropped() ? fmt::format(" ({} not recorded)", profiler.dropped()) : ""));
    v.kernels.resize(ranges.size());
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      report::Kernel& k = v.kernels[i];
      if (k.name.empty()) k.name = "kernel " + std::to_string(i);
      k.launch_index = static_cast<int>(i);
    }
  }
  for (std::size_t i = 0; i < ranges.size(); ++i) v.kernels[i].metrics = std::move(ranges[i].values);

  v.counters.collected = true;
  v.counters.metric_set = set_name;
  v.counters.passes = profiler.passes();
  v.counters.replay = to_string(settings.replay);
  v.counters.cache_control =
      flush && settings.replay != LabReplay::kernel ? kFlushedPasses : kWarmPasses;
  v.counters.collection_seconds = seconds_since(started);
}

// On the H200, a user-replay pass over a CUDA graph's launch failed in CUPTI 13.0
// (cuptiRangeProfilerStop: CUPTI_ERROR_UNKNOWN): auto range gives ranges to launches, and a
// graph's kernels are not launched one by one.
const char* const kGraphNote =
    "counters not collected: the kernels run inside a CUDA graph, and CUPTI 13.0's per-kernel "
    "ranges cover kernels launched one by one";

// Counters for every measured variant, after all timing is done.
void collect_counters(Session& session, labs::LabRun& run, report::Report& r,
                      const std::vector<std::string>& metric_names, const RunSettings& settings,
                      bool traced, const std::set<std::string>& graph_launched,
                      cudaStream_t stream, labs::L2Flusher& flusher) {
  std::vector<report::Variant*> profiled;
  for (auto& v : r.variants) {
    if (v.status == report::VariantStatus::skipped) continue;
    if (graph_launched.count(v.name)) {
      v.counters.note = kGraphNote;
      r.warnings.push_back(v.name + ": " + kGraphNote);
      continue;
    }
    profiled.push_back(&v);
  }
  if (profiled.empty()) return;

  // A named set adapts to the device: metrics its CUPTI does not know are left out, and the
  // report says which. (A list the user typed is taken as it is: CUPTI rejects unknown names.)
  std::vector<std::string> names = metric_names;
  if (report::metrics::is_set_name(settings.metrics)) {
    if (const auto unsupported = session.unsupported_metrics(names); unsupported && !unsupported->empty()) {
      std::string list;
      for (const auto& n : *unsupported) {
        list += (list.empty() ? "" : ", ") + n;
        names.erase(std::remove(names.begin(), names.end(), n), names.end());
      }
      r.warnings.push_back("not supported on this device, left out of the '" + settings.metrics +
                           "' set: " + list);
    }
  }
  std::string why_not;
  cupti::RangeProfiler* profiler = session.profiler(names, why_not);
  r.device = session.device();  // the profiler fills in the chip name and availability
  if (!profiler) {
    r.warnings.push_back(why_not + "; timing and correctness are reported without counters");
    for (auto* v : profiled) v->counters.note = why_not;
    return;
  }
  const std::string set_name =
      report::metrics::is_set_name(settings.metrics) ? settings.metrics : "custom";
  for (auto* v : profiled) {
    stop_if_interrupted();
    profile_variant(*profiler, run, r, *v, set_name, settings, traced, stream, flusher);
  }
}

// One more launch of every measured variant, recorded by the activity tracer: a pass of its
// own, after timing and before counters. A warm-up launch runs first with tracing on (see
// ActivityTracer::trace) and is left out; the lab prepares its inputs before each launch. A
// trace CUPTI refuses leaves the variants without a timeline, said in a warning: their checks
// and times stand.
void trace_variants(Session& session, cupti::ActivityTracer& tracer, labs::LabRun& run,
                    report::Report& r, const RunSettings& settings, cudaStream_t stream) {
  session.pause_sampling();
  for (auto& v : r.variants) {
    if (v.status == report::VariantStatus::skipped) continue;
    stop_if_interrupted();
    progress(settings, fmt::format("{}/{}: activity trace", r.subject(), v.name));
    const auto launch = [&] {
      run.launch(v.name, stream);
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    };
    run.prepare(v.name);
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    try {
      v.timeline = tracer.trace(launch, [&] {
        launch();
        run.prepare(v.name);
        GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
      });
    } catch (const ApiError& e) {
      if (e.api() != "CUPTI") throw;
      r.warnings.push_back(std::string("no timeline: ") + e.what());
      return;
    }
  }
}

// Per-instruction data for every measured variant, after its counters (app/source_collector.hpp).
void collect_variant_sources(Session& session, labs::LabRun& run, report::Report& r,
                             const RunSettings& settings, bool traced, cudaStream_t stream) {
  std::vector<VariantLaunch> launches;
  for (auto& v : r.variants) {
    if (v.status == report::VariantStatus::skipped) continue;
    launches.push_back({&v,
                        [&run, &v, traced] {
                          if (traced) run.prepare(v.name);
                          GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
                        },
                        [&run, &v, stream] {
                          stop_if_interrupted();
                          run.launch(v.name, stream);
                          GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
                        }});
  }
  progress(settings,
           fmt::format("{}: per-instruction counters and warp-stall samples", r.subject()));
  collect_sources(session, r, launches);
  if (!settings.embed_source) return;
  std::set<std::string> unread;
  for (auto& v : r.variants)
    for (auto& k : v.kernels)
      if (k.source)
        for (auto& file : embed_files(*k.source)) unread.insert(std::move(file));
  for (const auto& file : unread)
    r.warnings.push_back("--embed-source: " + file +
                         " not embedded: not a readable file of at "
                         "most 4 MiB here");
}

}  // namespace

report::Report run_lab(Session& session, const labs::Lab& lab, const RunSettings& settings,
                       const std::vector<std::string>& argv) {
  auto clock = std::chrono::steady_clock::now();
  const auto& spec = lab.spec();
  const auto variants = labs::select_variants(spec, settings.variants);
  const auto params = labs::resolve_params(spec, settings.size, settings.params);
  RunSettings resolved = settings;
  resolved.metrics = metric_set_for(settings.metrics, {spec.traced, true, settings.diagnosed});
  if (!resolved.cache_control) resolved.cache_control = default_cache_control(resolved.replay);
  if (resolved.replay == LabReplay::kernel && resolved.cache_control == CacheControl::all)
    throw UsageError("--cache-control all needs --replay-mode variant: CUPTI's kernel replay "
                     "cannot flush caches between its passes");
  const auto metric_names = report::metrics::resolve("--metrics", resolved.metrics);
  const Repetitions reps{settings.warmup.value_or(spec.default_warmup),
                         settings.repeat.value_or(spec.default_repeat), spec.traced,
                         settings.until_quiet};

  report::Report r;
  r.tool.version = kVersion;
  r.tool.git_sha = kGitSha;
  r.argv = argv;
  r.created_utc = utc_now();
  r.device = session.device();
  // Counters and timelines need CUPTI: without it the run stops here, before the lab's setup and
  // timing, with what to install (exit code 7). `--metrics none` on an untraced lab needs none.
  if (!metric_names.empty() || spec.traced || settings.source) cupti::require_library();
  r.lab = {spec.name, spec.topic, spec.summary};
  r.params = params;

  // The tracer exists before the lab allocates: see ActivityTracer's constructor.
  cupti::ActivityTracer* tracer = nullptr;
  if (spec.traced) {
    std::string why_not;
    tracer = session.tracer(why_not);
    if (!tracer) r.warnings.push_back(why_not + "; the variants are reported without a timeline");
  }

  // Names the kernels of every variant, libraries' included; without it (another CUPTI client
  // holds the callbacks) the lab's own kernels are still named by the runtime.
  cupti::LaunchRecorder* recorder = session.launch_recorder();
  // Per-instruction data names code by cubin, and PC sampling sees only the modules that load
  // while it is enabled: both begin before the lab's modules load.
  if (settings.source) {
    session.cubins();
    std::string why_not;
    session.pc_sampler(why_not);
  }

  stop_if_interrupted();
  progress(settings, fmt::format("{}: setting up", spec.name));
  add_phase(r, "device", clock);
  auto run = lab.setup(params, settings.seed);
  // Setup may have copied inputs on the legacy default stream, with which our non-blocking
  // stream does not synchronize (a pageable copy can return before the data has landed).
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  add_phase(r, "setup", clock);
  r.work = run->work();
  for (auto& w : run->warnings()) r.warnings.push_back(std::move(w));

  // A traced lab's variants use streams of their own; the legacy default stream synchronizes
  // with all of them, so events recorded on it bracket the whole variant.
  labs::CudaStream own_stream;
  const cudaStream_t stream = spec.traced ? cudaStreamLegacy : own_stream.get();
  labs::L2Flusher flusher(r.device.l2_bytes);

  std::set<std::string> graph_launched;  // variants whose kernels a CUDA graph launched
  // Ctrl-C in the shell stops the run between steps (see app/interrupt.hpp): never inside one,
  // where the GPU would be left mid-kernel or the profiler mid-pass.
  for (const auto* vs : variants) {
    stop_if_interrupted();
    report::Variant& out = r.variants.emplace_back();
    out.name = vs->name;
    out.role = vs->role;
    out.description = vs->description;
    out.work = run->variant_work(vs->name);
    if (auto reason = run->skip_reason(vs->name)) {
      out.status = report::VariantStatus::skipped;
      out.skip_reason = *reason;
      out.check.message = *reason;
      continue;
    }
    out.kernels = declared_kernels(*run, vs->name, r.device.max_warps_per_sm);
    progress(settings, fmt::format("{}/{}: check and time", spec.name, vs->name));
    if (check_and_time(session, *run, r, out, reps, stream, settings.cold ? &flusher : nullptr,
                       recorder))
      graph_launched.insert(out.name);
  }
  set_speedups(r);
  clock = std::chrono::steady_clock::now();
  if (tracer) {
    trace_variants(session, *tracer, *run, r, settings, stream);
    add_phase(r, "trace", clock);
  }
  if (!spec.no_counters.empty()) {  // said in every report, warned of when counters were asked
    if (!metric_names.empty()) r.warnings.push_back("counters not collected: " + spec.no_counters);
    for (auto& v : r.variants) v.counters.note = spec.no_counters;
  } else if (!metric_names.empty()) {
    collect_counters(session, *run, r, metric_names, resolved, spec.traced, graph_launched, stream,
                     flusher);
    add_phase(r, "counters", clock);
  }
  if (settings.source) {
    collect_variant_sources(session, *run, r, settings, spec.traced, stream);
    add_phase(r, "source", clock);
  }
  report::derive_all(r);
  report::summarize_timelines(r);
  return r;
}

}  // namespace gpulab::app

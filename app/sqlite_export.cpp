#include "app/sqlite_export.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/base/errors.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/principal.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::app {
namespace {

// docs/export.md documents each table and column; Export.TheSchemaIsDocumented checks that every
// table here is there.
constexpr const char* kSchemaSql = R"sql(
PRAGMA foreign_keys = ON;
CREATE TABLE IF NOT EXISTS reports (
  id INTEGER PRIMARY KEY,
  digest TEXT NOT NULL UNIQUE,
  file TEXT NOT NULL,
  schema TEXT NOT NULL,
  kind TEXT NOT NULL,
  subject TEXT NOT NULL,
  created_utc TEXT,
  tool_version TEXT,
  git_sha TEXT,
  argv TEXT,
  job TEXT,
  rank INTEGER);
CREATE TABLE IF NOT EXISTS devices (
  report_id INTEGER PRIMARY KEY REFERENCES reports(id) ON DELETE CASCADE,
  name TEXT, chip TEXT, compute_capability TEXT, sm_count INTEGER, sm_clock_hz REAL,
  memory_clock_hz REAL, theoretical_bandwidth REAL, copy_bandwidth REAL);
CREATE TABLE IF NOT EXISTS programs (
  report_id INTEGER PRIMARY KEY REFERENCES reports(id) ON DELETE CASCADE,
  ended TEXT, exit_code INTEGER, signal TEXT, wall_seconds REAL, replay TEXT,
  launches INTEGER, profiled_launches INTEGER, kernel_seconds REAL);
CREATE TABLE IF NOT EXISTS params (
  report_id INTEGER NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
  name TEXT NOT NULL, value INTEGER);
CREATE TABLE IF NOT EXISTS variants (
  id INTEGER PRIMARY KEY,
  report_id INTEGER NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
  position INTEGER, name TEXT, role TEXT, description TEXT, status TEXT,
  median_s REAL, min_s REAL, max_s REAL, repeat INTEGER, speedup REAL, roof_fraction REAL,
  launches INTEGER, profiled_launches INTEGER, total_seconds REAL, share_of_gpu_time REAL,
  principal_finding TEXT);
CREATE TABLE IF NOT EXISTS launches (
  id INTEGER PRIMARY KEY,
  variant_id INTEGER NOT NULL REFERENCES variants(id) ON DELETE CASCADE,
  launch_index INTEGER, name TEXT, function TEXT, mangled_name TEXT, grid_blocks INTEGER,
  block_threads INTEGER, registers_per_thread INTEGER, shared_bytes INTEGER,
  theoretical_occupancy REAL, duration_s REAL, verdict TEXT, principal_finding TEXT);
CREATE TABLE IF NOT EXISTS metrics (
  launch_id INTEGER NOT NULL REFERENCES launches(id) ON DELETE CASCADE,
  name TEXT NOT NULL, value REAL, derived INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS findings (
  id INTEGER PRIMARY KEY,
  launch_id INTEGER NOT NULL REFERENCES launches(id) ON DELETE CASCADE,
  position INTEGER, finding TEXT, title TEXT, severity TEXT, score REAL,
  saved REAL, speedup REAL, model TEXT);
CREATE TABLE IF NOT EXISTS finding_lines (
  finding_id INTEGER NOT NULL REFERENCES findings(id) ON DELETE CASCADE,
  file TEXT, line INTEGER, share REAL, what TEXT, detail TEXT);
CREATE TABLE IF NOT EXISTS timeline_events (
  variant_id INTEGER NOT NULL REFERENCES variants(id) ON DELETE CASCADE,
  kind TEXT, name TEXT, stream INTEGER, device INTEGER, start_s REAL, end_s REAL, bytes INTEGER);
CREATE INDEX IF NOT EXISTS variants_by_report ON variants(report_id);
CREATE INDEX IF NOT EXISTS launches_by_variant ON launches(variant_id);
CREATE INDEX IF NOT EXISTS metrics_by_launch ON metrics(launch_id);
CREATE INDEX IF NOT EXISTS findings_by_launch ON findings(launch_id);
)sql";

// FNV-1a of the report as gpulab writes it, and of its job and rank: the same report exported
// twice has the same digest, and one report can stand for two ranks.
std::string digest_of(const report::Report& report, const ExportSource& source) {
  std::uint64_t h = 14695981039346656037ull;
  const auto add = [&h](const std::string& text) {
    for (const unsigned char c : text) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  add(report::report_file_text(report));
  if (source.rank) add(fmt::format("\n{}\n{}", source.job, *source.rank));
  return fmt::format("{:016x}", h);
}

std::optional<double> duration_of(const report::Kernel& k) {
  const auto it = k.metrics.find(report::metrics::name::duration);
  if (it == k.metrics.end()) return std::nullopt;
  return it->second * 1e-9;  // ns
}

std::string principal_of(const report::Kernel& k) {
  return k.diagnosis && !k.diagnosis->findings.empty() ? k.diagnosis->findings.front().id : "";
}

// The statements of one export, prepared once.
struct Writer {
  explicit Writer(Database& db)
      : report(db,
               "INSERT INTO reports (digest, file, schema, kind, subject, created_utc, "
               "tool_version, git_sha, argv, job, rank) VALUES (?,?,?,?,?,?,?,?,?,?,?)"),
        device(db, "INSERT INTO devices VALUES (?,?,?,?,?,?,?,?,?)"),
        program(db, "INSERT INTO programs VALUES (?,?,?,?,?,?,?,?,?)"),
        param(db, "INSERT INTO params VALUES (?,?,?)"),
        variant(db,
                "INSERT INTO variants (report_id, position, name, role, description, status, "
                "median_s, min_s, max_s, repeat, speedup, roof_fraction, launches, "
                "profiled_launches, total_seconds, share_of_gpu_time, principal_finding) VALUES "
                "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        launch(db,
               "INSERT INTO launches (variant_id, launch_index, name, function, mangled_name, "
               "grid_blocks, block_threads, registers_per_thread, shared_bytes, "
               "theoretical_occupancy, duration_s, verdict, principal_finding) VALUES "
               "(?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        metric(db, "INSERT INTO metrics VALUES (?,?,?,?)"),
        finding(db,
                "INSERT INTO findings (launch_id, position, finding, title, severity, score, "
                "saved, speedup, model) VALUES (?,?,?,?,?,?,?,?,?)"),
        line(db, "INSERT INTO finding_lines VALUES (?,?,?,?,?,?)"),
        event(db, "INSERT INTO timeline_events VALUES (?,?,?,?,?,?,?,?)") {}

  Statement report, device, program, param, variant, launch, metric, finding, line, event;
};

void write_launch(Database& db, Writer& w, std::int64_t variant_id, const report::Kernel& k,
                  ExportCounts& counts) {
  const auto& a = k.attributes;
  w.launch.bind(1, variant_id)
      .bind(2, std::int64_t{k.launch_index})
      .bind(3, k.name)
      .bind(4, k.function)
      .bind(5, k.mangled_name)
      .bind(6, static_cast<std::int64_t>(a.grid_blocks))
      .bind(7, std::int64_t{a.block_threads})
      .bind(8, std::int64_t{a.registers_per_thread})
      .bind(9, static_cast<std::int64_t>(a.static_shared_bytes + a.dynamic_shared_bytes))
      .bind(10, a.theoretical_occupancy)
      .bind(11, duration_of(k))
      .bind(12, k.diagnosis ? k.diagnosis->verdict : std::string())
      .bind(13, principal_of(k))
      .run();
  const std::int64_t launch_id = db.last_row_id();
  ++counts.launches;
  for (const auto* values : {&k.metrics, &k.derived})
    for (const auto& [name, value] : *values) {
      w.metric.bind(1, launch_id)
          .bind(2, name)
          .bind(3, value)
          .bind(4, std::int64_t{values == &k.derived})
          .run();
      ++counts.metrics;
    }
  if (!k.diagnosis) return;
  std::int64_t position = 0;
  for (const auto& f : k.diagnosis->findings) {
    w.finding.bind(1, launch_id)
        .bind(2, position++)
        .bind(3, f.id)
        .bind(4, f.title)
        .bind(5, f.severity)
        .bind(6, f.score);
    if (f.estimate)
      w.finding.bind(7, f.estimate->saved)
          .bind(8, f.estimate->speedup())
          .bind(9, f.estimate->model);
    w.finding.run();
    const std::int64_t finding_id = db.last_row_id();
    ++counts.findings;
    for (const auto& l : f.lines)
      w.line.bind(1, finding_id)
          .bind(2, l.file)
          .bind(3, std::int64_t{l.line})
          .bind(4, l.share)
          .bind(5, l.what)
          .bind(6, l.detail)
          .run();
  }
}

void write_variant(Database& db, Writer& w, std::int64_t report_id, std::int64_t position,
                   const report::Variant& v, ExportCounts& counts) {
  w.variant.bind(1, report_id)
      .bind(2, position)
      .bind(3, v.name)
      .bind(4, std::string(report::to_string(v.role)))
      .bind(5, v.description)
      .bind(6, std::string(report::to_string(v.status)))
      .bind(7, v.timing.median)
      .bind(8, v.timing.min)
      .bind(9, v.timing.max)
      .bind(10, std::int64_t{v.timing.repeat})
      .bind(11, v.speedup)
      .bind(12, v.roof_fraction);
  if (v.totals)
    w.variant.bind(13, v.totals->launches)
        .bind(14, v.totals->profiled_launches)
        .bind(15, v.totals->total_seconds)
        .bind(16, v.totals->share_of_gpu_time);
  const std::string principal = report::principal_finding(v);
  if (!principal.empty()) w.variant.bind(17, principal);
  w.variant.run();
  const std::int64_t variant_id = db.last_row_id();
  ++counts.variants;
  for (const auto& k : v.kernels) write_launch(db, w, variant_id, k, counts);
  if (!v.timeline) return;
  for (const auto& a : v.timeline->activities)
    w.event.bind(1, variant_id)
        .bind(2, std::string(report::to_string(a.kind)))
        .bind(3, a.name)
        .bind(4, std::int64_t{a.stream})
        .bind(5, std::int64_t{a.device})
        .bind(6, a.start)
        .bind(7, a.end)
        .bind(8, static_cast<std::int64_t>(a.bytes))
        .run();
}

}  // namespace

void create_export_schema(Database& db) { db.exec(kSchemaSql); }

ExportCounts export_report(Database& db, const report::Report& r, const ExportSource& source,
                           bool replace) {
  const std::string digest = digest_of(r, source);
  Transaction transaction(db);
  Statement existing(db, "SELECT id FROM reports WHERE digest = ?");
  existing.bind(1, digest);
  if (existing.step()) {
    if (!replace)
      throw UsageError(fmt::format("'{}' is already in the database '{}' (--replace replaces it)",
                                   source.file, db.path()));
    Statement remove(db, "DELETE FROM reports WHERE digest = ?");
    remove.bind(1, digest).run();
  }
  Writer w(db);
  w.report.bind(1, digest)
      .bind(2, source.file)
      .bind(3, r.schema)
      .bind(4, std::string(r.program ? "program" : "lab"))
      .bind(5, r.subject())
      .bind(6, r.created_utc)
      .bind(7, r.tool.version)
      .bind(8, r.tool.git_sha)
      .bind(9, nlohmann::json(r.argv).dump());
  if (source.rank) w.report.bind(10, source.job).bind(11, *source.rank);
  w.report.run();
  const std::int64_t report_id = db.last_row_id();
  const auto& d = r.device;
  w.device.bind(1, report_id)
      .bind(2, d.name)
      .bind(3, d.chip)
      .bind(4, fmt::format("{}.{}", d.cc_major, d.cc_minor))
      .bind(5, std::int64_t{d.sm_count})
      .bind(6, d.sm_clock_hz)
      .bind(7, d.memory_clock_hz)
      .bind(8, d.roofs.theoretical_bandwidth)
      .bind(9, d.roofs.copy_bandwidth)
      .run();
  if (r.program) {
    const auto& p = *r.program;
    w.program.bind(1, report_id).bind(2, p.ended);
    if (p.exit_code) w.program.bind(3, std::int64_t{*p.exit_code});
    w.program.bind(4, p.signal)
        .bind(5, p.wall_seconds)
        .bind(6, p.replay)
        .bind(7, p.launches)
        .bind(8, p.profiled_launches)
        .bind(9, p.kernel_seconds)
        .run();
  }
  for (const auto& [name, value] : r.params)
    w.param.bind(1, report_id).bind(2, name).bind(3, value).run();
  ExportCounts counts;
  std::int64_t position = 0;
  for (const auto& v : r.variants) write_variant(db, w, report_id, position++, v, counts);
  transaction.commit();
  return counts;
}

}  // namespace gpulab::app

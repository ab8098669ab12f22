// `gpulab export --sqlite DB REPORT...`: saved reports into a SQLite database (docs/export.md),
// one transaction per report. No GPU needed.
#include <fmt/format.h>

#include "app/commands.hpp"
#include "reports/base/errors.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

#if GPULAB_HAVE_SQLITE
#include "app/sqlite_export.hpp"
#endif

namespace gpulab::app {

CLI::App* add_export(CLI::App& root, ExportOptions& options) {
  auto* cmd = root.add_subcommand(
      "export", "Write saved reports into a SQLite database to query with SQL (--sqlite)");
  cmd->add_option("reports", options.files, "Report files written by gpulab run, profile, ...")
      ->type_name("FILE")
      ->required();
  cmd->add_option("--sqlite", options.sqlite_path,
                  "The database: created when absent, appended to when not")
      ->type_name("DB")
      ->required();
  cmd->add_flag("--replace", options.replace,
                "Replace a report already in the database instead of refusing it");
  cmd->add_option("--ranks", options.job,
                  "The reports are ranks 0, 1, ... of the job JOB, in the order given")
      ->type_name("JOB");
  return cmd;
}

int run_export(const ExportOptions& options, Io& io) {
  // Every report is read before the database is touched: a bad file costs nothing.
  std::vector<report::Report> reports;
  for (const auto& f : options.files) reports.push_back(report::load_report(f));
#if GPULAB_HAVE_SQLITE
  Database db(options.sqlite_path);
  create_export_schema(db);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    ExportSource source{options.files[i], options.job, std::nullopt};
    if (!options.job.empty()) source.rank = static_cast<std::int64_t>(i);
    const auto n = export_report(db, reports[i], source, options.replace);
    io.err << fmt::format("{}: {} variants, {} launches, {} metric values, {} findings\n",
                          options.files[i], n.variants, n.launches, n.metrics, n.findings);
  }
  io.err << fmt::format("wrote {} report{} into {}\n", reports.size(),
                        reports.size() == 1 ? "" : "s", options.sqlite_path);
  return static_cast<int>(ExitCode::ok);
#else
  (void)io;
  throw UsageError(
      "export: this gpulab was built without SQLite (install libsqlite3-dev and build again)");
#endif
}

}  // namespace gpulab::app

// Reports into a SQLite database that users query with SQL (docs/export.md): its schema, and one
// report written in one transaction, so that a failed or killed export leaves the database as it
// was.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "app/sqlite_database.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::app {

// The tables, indexes and views of docs/export.md, created where absent.
void create_export_schema(Database& db);

// Where a report comes from: the file as given, and with --ranks, its job and rank.
struct ExportSource {
  std::string file;
  std::string job;
  std::optional<std::int64_t> rank;
};

struct ExportCounts {
  std::int64_t variants = 0;
  std::int64_t launches = 0;
  std::int64_t metrics = 0;
  std::int64_t findings = 0;
};

// Writes the report in one transaction. A report already in the database (the same content) is
// refused with a UsageError, or replaced with `replace`.
ExportCounts export_report(Database& db, const report::Report& report, const ExportSource& source,
                           bool replace);

}  // namespace gpulab::app

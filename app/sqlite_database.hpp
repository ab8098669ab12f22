// A SQLite database through its C library: opened, statements prepared once and run with bound
// values, and transactions that roll back unless committed. Every call is checked; a failure is
// a UsageError naming the database and what SQLite said.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace gpulab::app {

class Database {
 public:
  explicit Database(const std::string& path);  // created when absent
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(const std::string& sql);
  std::int64_t last_row_id() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  [[noreturn]] void fail(const std::string& doing) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  Statement(Database& db, const std::string& sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds the values from parameter `first` on (1-based), in order; nullopt and empty optionals
  // bind NULL.
  Statement& bind(int index, const std::string& value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, std::optional<double> value);
  Statement& bind_null(int index);
  // Runs an insert or update to its end, then resets for the next values.
  void run();
  // Runs a query: whether a row came; column_* read it.
  bool step();
  std::int64_t column_int(int column) const;
  void reset();

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() ran: a failed or
// interrupted export leaves the database as it was (SQLite's journal undoes even a killed one).
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace gpulab::app

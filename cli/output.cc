// Tables and JSON for the `areev` subcommands.
#include "output.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "grainstore/display_text.h"
#include "grainstore/time_format.h"

namespace cli {

std::string ShortId(std::string_view grain_id) {
  if (grain_id.empty()) return "-";
  return std::string(grain_id.substr(0, kShortIdChars));
}

std::string CellText(std::string_view value, std::size_t max_chars) {
  return grainstore::DisplayText(value, max_chars);
}

Table::Table(std::vector<std::string> headers, std::vector<bool> right_aligned)
    : headers_(std::move(headers)), right_(std::move(right_aligned)) {
  right_.resize(headers_.size(), false);
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  std::vector<std::size_t> widths(headers_.size(), 0);
  auto measure = [&widths](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], grainstore::DisplayWidth(row[i]));
  };
  measure(headers_);
  for (const auto& row : rows_) measure(row);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::size_t pad = widths[i] - grainstore::DisplayWidth(row[i]);
      const bool last = i + 1 == row.size();
      if (i > 0) line += "  ";
      if (right_[i]) line.append(pad, ' ');
      line += row[i];
      if (!right_[i] && !last) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  emit(headers_);
  for (const auto& row : rows_) emit(row);
  return out;
}

std::string JsonText(const nlohmann::json& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

nlohmann::json VersionJson(const grainstore::VersionInfo& v) {
  return nlohmann::json{
      {"version", v.seq},
      {"grain_id", v.grain_id},
      {"chain_id", v.chain_id},
      {"subject", v.subject},
      {"relation", v.relation},
      {"created", grainstore::FormatIsoUtc(v.created_ns, 9)},
      {"created_ns", v.created_ns},
      {"size", v.size},
      {"op", v.op},
      {"supersedes",
       v.supersedes.empty() ? nlohmann::json() : nlohmann::json(v.supersedes)},
      {"derived_from", v.derived_from.empty() ? nlohmann::json()
                                              : nlohmann::json(v.derived_from)},
      {"transient", v.transient},
      {"purged", v.purged},
  };
}

nlohmann::json OpJson(const grainstore::OpRecord& op) {
  return nlohmann::json{
      {"seq", op.seq},
      {"ns", op.ns},
      {"at", grainstore::FormatIsoUtc(op.at_ns, 9)},
      {"at_ns", op.at_ns},
      {"op", op.op},
      {"subject", op.subject},
      {"new_subject", op.new_subject.empty() ? nlohmann::json()
                                             : nlohmann::json(op.new_subject)},
      {"node_id", op.node_id},
      {"chain_id", op.chain_id},
      {"grain_id",
       op.grain_id.empty() ? nlohmann::json() : nlohmann::json(op.grain_id)},
      {"origin", fmt::format("{:016x}", op.origin)},
  };
}

nlohmann::json FactJson(const grainstore::Fact& fact) {
  return nlohmann::json{
      {"grain_id", fact.grain_id},
      {"type", fact.type == grainstore::GrainType::kEvent ? "event" : "fact"},
      {"subject", fact.subject},
      {"relation", fact.relation},
      {"object", fact.object},
      {"context", fact.context},
      {"created", grainstore::FormatIsoUtc(fact.created_ns, 9)},
      {"created_ns", fact.created_ns},
      {"chain_id", fact.chain_id},
      {"version", fact.seq},
      {"live", fact.live},
  };
}

}  // namespace cli

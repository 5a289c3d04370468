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
  widths_.resize(headers_.size(), 0);
  Measure(headers_);
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  Measure(cells);
  rows_.push_back(std::move(cells));
}

void Table::Measure(const std::vector<std::string>& cells) {
  for (std::size_t i = 0; i < cells.size() && i < widths_.size(); ++i)
    widths_[i] = std::max(widths_[i], grainstore::DisplayWidth(cells[i]));
}

std::string Table::RenderRow(const std::vector<std::string>& cells) const {
  std::string line;
  for (std::size_t i = 0; i < widths_.size(); ++i) {
    const std::string_view cell = i < cells.size() ? std::string_view(cells[i]) : "";
    const std::size_t width = grainstore::DisplayWidth(cell);
    const std::size_t pad = widths_[i] > width ? widths_[i] - width : 0;
    const bool last = i + 1 == widths_.size();
    if (i > 0) line += "  ";
    if (right_[i]) line.append(pad, ' ');
    line += cell;
    if (!right_[i] && !last) line.append(pad, ' ');
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  line += '\n';
  return line;
}

std::string Table::Render() const {
  std::string out = RenderHeader();
  for (const auto& row : rows_) out += RenderRow(row);
  return out;
}

std::string JsonText(const nlohmann::json& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

std::string JsonArrayText::Item(const nlohmann::json& item) {
  // JsonText's layout: the array's items one level in, each line of an
  // item's own text indented by two more spaces.
  std::string out = any_ ? ",\n  " : "[\n  ";
  any_ = true;
  const std::string text = item.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

std::string JsonArrayText::End() const { return any_ ? "\n]\n" : "[]\n"; }

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

nlohmann::json ChainJson(const grainstore::ChainInfo& c) {
  const bool deleted = c.state != grainstore::ChainState::kLive;
  const bool purged = c.state == grainstore::ChainState::kPurged;
  return nlohmann::json{
      {"chain_id", c.id},
      {"subject", c.subject},
      {"relation", c.relation},
      {"state", grainstore::ChainStateName(c.state)},
      {"versions", c.head_seq},
      {"created", grainstore::FormatIsoUtc(c.created_ns, 9)},
      {"created_ns", c.created_ns},
      {"deleted",
       deleted ? nlohmann::json(grainstore::FormatIsoUtc(c.deleted_ns, 9)) : nlohmann::json()},
      {"deleted_ns", deleted ? nlohmann::json(c.deleted_ns) : nlohmann::json()},
      {"purged", purged ? nlohmann::json(grainstore::FormatIsoUtc(c.purged_ns, 9))
                        : nlohmann::json()},
      {"purged_ns", purged ? nlohmann::json(c.purged_ns) : nlohmann::json()},
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
